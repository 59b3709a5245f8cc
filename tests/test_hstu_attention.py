"""hstu_attention (recsys-examples' triton_hstu_mha, triton_cached_hstu_mha): block variants the
default configs do not run, upstream's autograd entry point and sort_by_length, the mask's facts,
the checked mode's refusals, user cases with zero flags."""

import pytest
import torch

from core.limits import DeviceLimits
from ops import get_op
from ops.hstu_attention import valid_mask
from ops.ports import load_port

SPEC = get_op("hstu_attention")
CASE = "b3_h2_n36_d128_t1_c4_w0_fp32"  # targets and contextual positions
WINDOW = "b2_h2_n40_d24_t1_c0_w6_fp32"  # targets and a window, a head dim of 24


@pytest.fixture
def port(cpu):
    return load_port("hstu_attention")


def relative_error(actual, golden):
    return float((actual.double() - golden).norm() / golden.norm().clamp_min(1e-30))


@pytest.mark.parametrize("name", [CASE, WINDOW])
def test_block_variants_match_the_golden(cpu, name):
    case = SPEC.case(name)
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    for kernel in SPEC.kernels:
        variants = [{"BLOCK_M": 32, "BLOCK_N": 16}, {"BLOCK_M": 64, "BLOCK_N": 64}]
        if kernel.name == "bwd":  # upstream's other form: a program per key block
            variants += [{**v, "SEQUENCE_PARALLEL": True} for v in variants]
        for blocks in variants:
            config = {**kernel.default(case), **blocks}
            for output, value in SPEC.launch(kernel.name, inputs, config).items():
                error = relative_error(value, golden[output])
                assert error <= SPEC.tolerance["float32"], (kernel.name, blocks, output, error)


def test_autograd_entry_point_and_sort_by_length(port):
    case = SPEC.case(WINDOW)
    inputs = SPEC.make_inputs(case, torch.device("cpu"))
    golden = SPEC.reference(inputs)
    n, alpha, targets, window, contextual = SPEC._options(inputs)
    for sort in (False, True):
        q, k, v = (inputs[x].clone().requires_grad_() for x in "qkv")
        out = port.triton_hstu_mha(
            n, alpha, q, k, v, inputs["offsets"], targets, window, contextual, sort, True
        )
        out.backward(inputs["dout"])
        for name, value in (("out", out), ("dq", q.grad), ("dk", k.grad), ("dv", v.grad)):
            assert relative_error(value.detach(), golden[name]) <= 1e-4, (sort, name)
    assert port.sort_by_length_indices(inputs["offsets"]).tolist() == [1, 0]  # 40 rows, then 33


def test_targets_see_the_history_and_themselves_and_contextual_rows_see_all():
    mask = valid_mask(8, 2, 2, 0, torch.device("cpu"))  # ids 0 0 1 2 3 4 5 5
    assert mask[7].tolist() == [True] * 6 + [False, True]  # a target: history, itself
    assert mask[0].tolist() == [True] * 6 + [False, False]  # contextual: all but the targets
    assert mask[3].tolist() == [True] * 4 + [False] * 4  # causal
    window = valid_mask(8, -1, 0, 2, torch.device("cpu"))
    assert window[5].tolist() == [False] * 3 + [True] * 3 + [False] * 2


def test_the_cached_forward_equals_the_forwards_last_rows(port):
    """Queries appended to a cache give the rows the whole forward gives at their positions."""
    case = SPEC.case(CASE)
    inputs = SPEC.make_inputs(case, torch.device("cpu"))
    n, alpha, targets, window, contextual = SPEC._options(inputs)
    k, v, offsets = inputs["k_cache"], inputs["v_cache"], inputs["cache_offsets"]
    delta = inputs["delta_q"].size(0) // (offsets.numel() - 1)
    q = torch.randn(k.shape)
    ends = offsets[1:].tolist()
    for b, end in enumerate(ends):
        q[end - delta : end] = inputs["delta_q"][b * delta : (b + 1) * delta]
    whole = port.triton_hstu_attention_fwd(n, alpha, q, k, v, offsets, targets, window,
                                           contextual, None, False)  # fmt: skip
    cached = port.triton_cached_hstu_mha(n, alpha, inputs["delta_q"], k, v, offsets, targets,
                                         window, contextual)  # fmt: skip
    rows = torch.cat([torch.arange(end - delta, end) for end in ends])
    torch.testing.assert_close(cached, whole[rows], rtol=1e-5, atol=1e-6)


def test_checked_mode_refuses_in_one_line(port):
    inputs = SPEC.make_inputs(SPEC.case(CASE), torch.device("cpu"))
    q, k, v, offsets, targets = (inputs[x] for x in ("q", "k", "v", "offsets", "num_targets"))
    call = port.triton_hstu_attention_fwd
    with pytest.raises(ValueError, match="over max_seq_len=20"):
        call(20, 0.1, q, k, v, offsets, targets, 0, 4, None, False, check=True)
    with pytest.raises(ValueError, match=r"num_targets must lie in \[0"):
        call(36, 0.1, q, k, v, offsets, targets + 40, 0, 4, None, False, check=True)
    with pytest.raises(ValueError, match="one entry per sequence"):
        call(36, 0.1, q, k, v, offsets, targets[:2], 0, 4, None, False, check=True)
    with pytest.raises(ValueError, match="new queries"):
        port.triton_cached_hstu_mha(36, 0.1, q[:30], k, v, offsets, None, check=True)


def test_user_cases_take_zero_flags_and_stay_under_max_seq_len():
    case = SPEC.case_from_shape(
        {"B": 5, "H": 2, "max_seq_len": 30, "D": 32, "targets": 0, "contextual": 0, "window": 0},
        "bf16",
        None,
    )
    assert case.name == "b5_h2_n30_d32_t0_c0_w0_bf16" and max(case.lengths) < 30
    with pytest.raises(ValueError, match="targets must be 0 or 1"):
        SPEC.case_from_shape({**case.shape, "targets": 3}, "bf16", None)


def test_the_space_avoids_the_950s_dot_rows_of_32_bytes():
    case = SPEC.case("b1_h2_n16_d32_t0_c0_w0_fp16")
    limits = DeviceLimits(crashing_dot_row_bytes=32)
    for kernel in SPEC.kernels:
        config = {**kernel.default(case), "BLOCK_N": 16}
        assert "aborts" in kernel.violation(config, case, limits)
        assert kernel.violation(kernel.default(case), case, limits) is None

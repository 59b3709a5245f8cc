"""multi_head_jagged_flash_attention: BLOCK_M / BLOCK_N variants (tests/test_kernels.py varies only
the shared tunable names), the bwd's BLOCK_M == BLOCK_N constraint, edge semantics."""

import pytest
import torch

from core.limits import DeviceLimits
from ops import all_ops
from ops.ports import load_port

SPEC = all_ops()["multi_head_jagged_flash_attention"]
CASE = "b4_h1_n16_d32_fp32"


def relative_error(actual, golden):
    return float((actual.double() - golden).norm() / golden.norm().clamp_min(1e-30))


def test_block_variants_match_the_golden(cpu):
    case = SPEC.case(CASE)
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    variants = {
        "fwd": ({"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_D": 16}, {"BLOCK_M": 64, "BLOCK_N": 16}),
        "bwd_preprocess": ({"BLOCK_M": 16, "BLOCK_D": 16},),
        "bwd": ({"BLOCK_M": 16, "BLOCK_N": 16}, {"BLOCK_M": 64, "BLOCK_N": 64}),
    }
    for kernel in SPEC.kernels:
        kernel_inputs = SPEC.kernel_inputs(kernel.name, inputs, golden)
        for change in variants[kernel.name]:
            config = {**kernel.default(case), **change}
            for name, value in SPEC.launch(kernel.name, kernel_inputs, config).items():
                want = SPEC.comparable(name, golden[name], inputs)
                error = relative_error(SPEC.comparable(name, value, inputs), want)
                assert error <= SPEC.tolerance["float32"], (kernel.name, config, name, error)


def test_bwd_needs_square_blocks(cpu):
    case = SPEC.case("b3_h2_n40_d24_fp32")
    bwd = SPEC.kernel("bwd")
    config = {**bwd.default(case), "BLOCK_M": 16, "BLOCK_N": 32}
    assert "BLOCK_M == BLOCK_N" in bwd.violation(config, case, DeviceLimits())
    assert bwd.violation(bwd.default(case), case, DeviceLimits()) is None
    inputs = SPEC.make_inputs(case, cpu.device)
    kernel_inputs = SPEC.kernel_inputs("bwd", inputs, SPEC.reference(inputs))
    with pytest.raises(ValueError, match="BLOCK_M == BLOCK_N"):
        SPEC.launch("bwd", kernel_inputs, config)


def test_edge_semantics(cpu):
    """Empty sequences and rows past max_seq_len give zero out, dq, dk and dv in every head."""
    case = SPEC.case("b3_h2_n40_d24_fp32")
    assert case.lengths == (40, 0, 57)
    inputs = SPEC.make_inputs(case, cpu.device)
    out = SPEC.run_port(inputs)
    truncated = slice(int(inputs["offsets"][2]) + 40, int(inputs["offsets"][3]))
    for name in ("out", "dq", "dk", "dv"):
        assert torch.count_nonzero(out[name][:, truncated]) == 0, name
    assert torch.isinf(out["lse"][:, truncated]).all()
    assert load_port(SPEC.name).default_config("bwd", case.shape) == SPEC.kernel("bwd").default(
        case
    )


def test_the_reference_in_chunks_of_sequences_equals_it_in_one(cpu, monkeypatch):
    """The big performance cases compute their golden a few sequences at a time; the split must
    not change a value (here every chunk is one sequence, against one chunk of all)."""
    import ops.jagged_flash_attention_basic as basic
    from ops.jagged import sequence_chunks

    inputs = SPEC.make_inputs(SPEC.case(CASE), cpu.device)
    whole = SPEC.reference(inputs)
    chunks = []

    def one_at_a_time(offsets, per_sequence):
        chunks.append(sequence_chunks(offsets, per_sequence, budget=1))
        return chunks[-1]

    monkeypatch.setattr(basic, "sequence_chunks", one_at_a_time)
    split = SPEC.reference(inputs)
    assert len(chunks[0]) == inputs["offsets"].numel() - 1 > 1
    assert whole.keys() == split.keys()
    for name in whole:
        torch.testing.assert_close(split[name], whole[name], rtol=1e-12, atol=1e-12)

"""jagged_dense_bmm_broadcast_add (recsys-examples' triton_jagged): what the op's cases do not run
(programs walking several tiles, a max_seq_len far below the lengths, the autograd Function, the
input checks) and, with the checkout, upstream's own Function at its first config in the
interpreter against the port."""

from types import SimpleNamespace

import pytest
import torch

from core import upstream
from ops import get_op
from ops.ports import load_port

SPEC = get_op("jagged_dense_bmm_broadcast_add")
CONFIG = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}
KERNELS = tuple(kernel.name for kernel in SPEC.kernels)


@pytest.fixture
def port(cpu):
    return load_port(SPEC.name)


def inputs(name="b3_n40_d100_t72_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-4, atol=1e-5)


def test_programs_walk_every_tile_once(port, monkeypatch):
    """Fewer programs than tiles (3 for dozens): every output is computed once, as with one
    program per tile, in each kernel's tile order."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 3)
    given, golden = inputs(), SPEC.reference(inputs())
    for kernel in SPEC.kernels:
        for name, value in SPEC.launch(kernel.name, given, CONFIG).items():
            assert close(value, golden[name]), (kernel.name, name)


@pytest.mark.parametrize("flat", [False, True], ids=["nested", "flat"])
@pytest.mark.parametrize("programs", [None, 3], ids=["grid", "walking"])
def test_rows_past_max_seq_len_are_computed(port, monkeypatch, flat, programs):
    """max_seq_len sizes the grid only: with max_seq_len 1 (upstream's grid: one row block per
    sequence) every row of every sequence is still computed, by the same programs, in both forms
    of a tile's loop (the one loop runs on a CUDA GPU in fp32, which the interpreter is not) and
    with programs walking the tiles."""
    monkeypatch.setattr(port, "_flat", lambda precision, dtype, device: flat)
    if programs:
        monkeypatch.setattr(port, "MAX_PROGRAMS", programs)
    given = {**inputs(), "max_seq_len": torch.tensor(1)}
    golden = SPEC.reference(given)
    for name, value in SPEC.run_port(given, dict.fromkeys(KERNELS, CONFIG)).items():
        assert close(value, golden[name]), name


def test_rows_past_max_seq_len_in_pieces_smaller_than_the_block(port):
    """Blocks of 64 take the later row blocks in 32 x 32 x 32 pieces: sequences of 150 and 70
    rows over a max_seq_len of 1 (row blocks 64 apart), D = 100 and T = 72 (the last K piece and
    a column piece partly past the edge, another wholly), every row computed."""
    case = SPEC.make_case({"B": 3, "max_seq_len": 1, "D": 100, "T": 72}, "float32", (150, 0, 70))
    given = SPEC.make_inputs(case, torch.device("cpu"))
    golden = SPEC.reference(given)
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}
    for name, value in SPEC.run_port(given, dict.fromkeys(KERNELS, config)).items():
        assert close(value, golden[name]), name


def test_the_autograd_function_is_upstreams_call(port):
    """jagged_dense_bmm_broadcast_add(max_seq_len, seq_offsets, jagged, dense, bias), as upstream's
    triton_jagged_dense_bmm_broadcast_add: gradients of the jagged values, the weights and bias."""
    given = inputs()
    golden = SPEC.reference(given)
    leaves = [given[k].clone().requires_grad_() for k in ("x", "y", "bias")]
    out = port.jagged_dense_bmm_broadcast_add(40, given["offsets"], *leaves)
    out.backward(given["dout"])
    assert close(out.detach(), golden["out"])
    for leaf, name in zip(leaves, ("dx", "dy", "dbias"), strict=True):
        assert close(leaf.grad, golden[name]), name


def test_checked_inputs_say_what_is_wrong(port):
    x, y, bias, offsets = (inputs()[k] for k in ("x", "y", "bias", "offsets"))
    with pytest.raises(ValueError, match="bias"):
        port.jagged_dense_bmm_broadcast_add_fwd(x, y, bias[:, :5], offsets, 40, check=True)
    with pytest.raises(ValueError, match="offsets end at"):
        port.jagged_dense_bmm_broadcast_add_fwd(x[1:], y, bias, offsets, 40, check=True)


def test_upstream_runs_only_within_its_contract():
    """A case with a sequence over max_seq_len is not upstream's (its out rows there are never
    written): no upstream reference for it; the performance cases all keep the contract."""
    longer = SPEC.case("b4_n16_d32_t20_fp32")
    assert max(longer.lengths) > longer.shape["max_seq_len"]
    assert SPEC.upstream_outputs(longer) == ()
    for case in SPEC.cases("performance"):
        assert max(case.lengths) < case.shape["max_seq_len"], case.name


@pytest.mark.skipif(
    upstream.RECSYS_EXAMPLES.missing() is not None,
    reason=upstream.RECSYS_EXAMPLES.missing() or "",
)
def test_upstreams_function_at_its_first_config_equals_the_port(port, monkeypatch):
    """Upstream's autograd Function in the interpreter, its autotuners held to their first config
    (one config: Triton's Autotuner then times nothing), against the port at that config.
    Upstream joins its load masks with Python's `and`, which the compiler reads as a logical and
    but the interpreter as Python's (its tensors are all true: the first mask is dropped), so
    here every length is a multiple of BLOCK_M (64) and D and T of the blocks, where its masks
    are whole rows and columns."""
    module = SPEC.upstream.load()
    for name in ("jagged_dense_bmm_broadcast_add_kernel", "_jagged_jagged_bmm_reduce_sum"):
        tuner = getattr(module, name)
        monkeypatch.setattr(tuner, "configs", tuner.configs[:1])
    shape = {"B": 3, "max_seq_len": 128, "D": 64, "T": 64}
    case = SPEC.make_case(shape, "float32", (64, 0, 128))
    given = SPEC.make_inputs(case, torch.device("cpu"))
    want = SPEC.run_port(given, {k.name: k.default(case) for k in SPEC.kernels})
    function, ctx = getattr(module, SPEC.upstream_function), type("Ctx", (), {})()
    ctx.save_for_backward = lambda *tensors: setattr(ctx, "saved_tensors", tensors)
    out = function.forward(ctx, *SPEC.upstream_args(given))
    _, _, dx, dy, dbias = function.backward(ctx, given["dout"])
    for name, value in {"out": out, "dx": dx, "dy": dy, "dbias": dbias}.items():
        assert close(value, want[name]), name


@pytest.mark.parametrize(
    ("precision", "dtype", "device", "flat"),
    [
        ("ieee", torch.float32, "cuda", True),
        ("ieee", torch.bfloat16, "cuda", False),
        ("ieee", torch.float16, "cuda", False),
        ("tf32", torch.float32, "cuda", False),
        ("ieee", torch.float32, "npu", False),
        ("hf32", torch.float32, "npu", False),
    ],
)
def test_one_loop_only_on_a_cuda_gpu_in_ieee_fp32(port, precision, dtype, device, flat):
    """The one loop is the faster form on the H200 in IEEE fp32 alone: 16-bit inputs (whose
    precision is "ieee" too), TF32 and every NPU keep the nested loops."""
    assert port._flat(precision, dtype, SimpleNamespace(type=device)) is flat

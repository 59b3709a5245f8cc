"""jagged_dense_bmm and jagged_jagged_bmm: tile variants, edge semantics, constraints, GPU-side API."""

import importlib.util
import sys

import pytest
import torch

from autotuner.backends.npu import npu_limits
from core.limits import DeviceLimits
from core.paths import atk_dir
from ops import all_ops
from ops.ports import load_port

OPS = ("jagged_dense_bmm", "jagged_jagged_bmm")
H200 = DeviceLimits(shared_memory_bytes=232448, cores=132)


def relative_error(actual, golden):
    return float((actual.double() - golden).norm() / golden.norm().clamp_min(1e-30))


@pytest.mark.parametrize("op", OPS)
def test_each_kernel_with_small_and_large_tiles(op, cpu):
    """Blocks smaller and larger than every dimension (test_kernels varies BLOCK_T/L/D only)."""
    spec = all_ops()[op]
    case = spec.case("b3_n40_d24_t72_fp32")
    inputs = spec.make_inputs(case, cpu.device)
    golden = spec.reference(inputs)
    for kernel in spec.kernels:
        for blocks in ((16, 16, 16), (64, 128, 16), (16, 32, 64)):
            config = {
                **kernel.default(case),
                **dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"), blocks, strict=True)),
            }
            for name, value in spec.launch(kernel.name, inputs, config).items():
                error = relative_error(value, golden[name])
                assert error <= spec.tolerance["float32"], (kernel.name, config, name, error)


def test_edge_semantics(cpu):
    """Rows past max_seq_len: zero out and dx (dense bmm), zero dx and dy (jagged bmm);
    an empty sequence: zero dy (dense bmm), zero out (jagged bmm)."""
    for op in OPS:
        spec = all_ops()[op]
        case = spec.case("b4_n16_d32_t20_fp32")
        assert case.lengths == (0, 5, 16, 23)
        inputs = spec.make_inputs(case, cpu.device)
        got = spec.run_port(inputs)
        offsets = inputs["offsets"]
        truncated = slice(int(offsets[3]) + 16, int(offsets[4]))
        if op == "jagged_dense_bmm":
            assert not got["out"][truncated].any() and not got["dx"][truncated].any()
            assert not got["dy"][0].any()
        else:
            assert not got["dx"][truncated].any() and not got["dy"][truncated].any()
            assert not got["out"][0].any()


@pytest.mark.parametrize("op", OPS)
def test_autograd_function_gives_the_backward(op, cpu):
    spec = all_ops()[op]
    case = spec.case("b4_n16_d32_t20_fp32")
    inputs = spec.make_inputs(case, cpu.device)
    port = load_port(op)
    x, y = (inputs[k].detach().requires_grad_() for k in ("x", "y"))
    out = getattr(port, op)(x, y, inputs["offsets"], int(inputs["max_seq_len"]))
    dx, dy = torch.autograd.grad(out, (x, y), inputs["dout"])
    want = spec.run_port(inputs)
    assert torch.equal(out, want["out"]) and torch.equal(dx, want["dx"])
    assert torch.equal(dy, want["dy"])


@pytest.mark.parametrize("op", OPS)
def test_defaults_are_feasible_and_constraints_prune(op):
    spec = all_ops()[op]
    for case in spec.cases("accuracy") + spec.cases("performance"):
        for kernel in spec.kernels:
            for limits in (H200, npu_limits("910B")):
                assert kernel.violation(kernel.default(case), case, limits) is None, (
                    case.name,
                    kernel.name,
                )
            # On the 950 only the compiler's abort on 32-byte rows of a transposed operand, which
            # upstream's 16-wide default blocks give small 16-bit cases (docs/ascend.md).
            reason = kernel.violation(kernel.default(case), case, npu_limits("950PR"))
            assert reason is None or (
                reason.startswith("the compiler aborts") and case.kind == "accuracy"
            ), (case.name, kernel.name, reason)
    case = spec.case("b1_n16_d16_t16_fp32")
    kernel = spec.kernel("fwd")
    too_big = {**kernel.default(case), "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}
    assert "larger than" in kernel.violation(too_big, case, H200)
    big = spec.case("b1024_n256_d128_t128_bf16")
    spill = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "num_warps": 2, "num_stages": 2}
    assert "registers" in kernel.violation(spill, big, H200)
    huge = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 256, "multibuffer": True}
    # Over the 910B's L0C (the compiler: "cc overflow, requires 2097152 bits while 1048576 bits");
    # jagged_jagged_bmm's forward takes x transposed, by the vector code: its UB is over first.
    over = kernel.violation(huge, big, npu_limits("910B"))
    assert over == (
        "tiles need 262144 B of unified buffer, over 196608 B"
        if op == "jagged_jagged_bmm"
        else "dot results need 262144 B of L0C, over 131072 B"
    )


@pytest.mark.parametrize("op", OPS)
def test_gpu_side_api_runs_upstream_under_the_interpreter(op, cpu, monkeypatch):
    """Upstream's Triton bmm allocates like its inputs, so its API also runs without a GPU."""
    spec = all_ops()[op]
    folder = atk_dir(op) / "gpu_atk_test"
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in (op, f"{op}_support"):  # the API imports both by their bare names
        sys.modules.pop(name, None)
    module_spec = importlib.util.spec_from_file_location(
        f"_bmm_gpu_api_{op}", folder / f"{op}_api.py"
    )
    api = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(api)
    case = spec.case("b4_n16_d32_t20_fp32")
    inputs = spec.make_inputs(case, cpu.device)
    args = [inputs[name] for name in spec.input_names]
    cls = next(v for v in vars(api).values() if getattr(v, "atk_name", None) == op)
    outputs = cls(None)(sys.modules[f"{op}_support"].InputDataset(args))
    golden = spec.reference(inputs)
    for name, value in zip(spec.output_names, outputs, strict=True):
        assert torch.allclose(value.double(), golden[name], rtol=1e-4, atol=1e-5), name
    for name in (op, f"{op}_support"):
        sys.modules.pop(name, None)

"""jagged_flash_attention_basic: its BLOCK_M / BLOCK_N variants (tests/test_kernels.py varies only
the shared tunable names) and its edge semantics, under the interpreter."""

import torch

from ops import all_ops

SPEC = all_ops()["jagged_flash_attention_basic"]


def relative_error(actual, golden):
    return float((actual.double() - golden).norm() / golden.norm().clamp_min(1e-30))


def test_block_variants_match_the_golden(cpu):
    case = SPEC.case("b4_n16_d32_fp32_mask")
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    variants = {
        "fwd": ({"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_D": 16}, {"BLOCK_M": 64, "BLOCK_N": 16}),
        "bwd_preprocess": ({"BLOCK_M": 16, "BLOCK_D": 16},),
        "bwd": ({"BLOCK_M": 16, "BLOCK_N": 64}, {"BLOCK_M": 64, "BLOCK_N": 16}),
    }
    for kernel in SPEC.kernels:
        kernel_inputs = SPEC.kernel_inputs(kernel.name, inputs, golden)
        for change in variants[kernel.name]:
            config = {**kernel.default(case), **change}
            for name, value in SPEC.launch(kernel.name, kernel_inputs, config).items():
                want = SPEC.comparable(name, golden[name], inputs)
                error = relative_error(SPEC.comparable(name, value, inputs), want)
                assert error <= SPEC.tolerance["float32"], (kernel.name, config, name, error)


def test_edge_semantics(cpu):
    """Empty sequences and rows past max_seq_len give zero out, dq, dk and dv."""
    case = SPEC.case("b4_n16_d32_fp32_mask")
    assert case.lengths == (0, 5, 16, 23) and case.use_mask
    inputs = SPEC.make_inputs(case, cpu.device)
    out = SPEC.run_port(inputs)
    truncated = slice(int(inputs["offsets"][3]) + 16, int(inputs["offsets"][4]))
    for name in ("out", "dq", "dk", "dv"):
        assert torch.count_nonzero(out[name][truncated]) == 0, name
    assert torch.isinf(out["lse"][truncated]).all()


def test_mask_changes_the_result(cpu):
    case = SPEC.case("b4_n16_d32_fp32_mask")
    inputs = SPEC.make_inputs(case, cpu.device)
    unmasked = SPEC.reference({**inputs, "use_mask": torch.tensor(False)})
    assert not torch.allclose(SPEC.reference(inputs)["out"], unmasked["out"])

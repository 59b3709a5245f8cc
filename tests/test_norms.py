"""layer_norm, rms_norm and swish_layer_norm (recsys-examples' row norms): the port's kernels against the golden
with programs that walk several row blocks, and the program count's bounds."""

import pytest
import torch

from ops import get_op
from ops.norm import MAX_NUM_PROGRAMS, programs

NORMS = ("layer_norm", "rms_norm", "swish_layer_norm")


@pytest.mark.parametrize("op", NORMS)
def test_each_kernel_alone_computes_its_outputs(op, cpu):
    """Rows not a multiple of the row block, D not a power of two, a few programs walking
    several row blocks each: every kernel run alone on its inputs gives the golden."""
    spec = get_op(op)
    case = spec.case("n37_d100_fp32")
    inputs = spec.make_inputs(case, cpu.device)
    golden = spec.reference(inputs)
    for kernel in spec.kernels:
        config = (
            dict(kernel.default(case), BLOCK_N=4, NUM_PROGRAMS=16)
            if "NUM_PROGRAMS" in kernel.default(case)
            else dict(kernel.default(case), BLOCK_N=8)
        )
        out = spec.launch(kernel.name, spec.kernel_inputs(kernel.name, inputs, golden), config)
        for name in kernel.outputs:
            assert torch.allclose(out[name].double(), golden[name], rtol=1e-4, atol=1e-5), name


def test_programs_never_exceed_the_row_blocks_or_the_launch_limit():
    case = get_op("layer_norm").case("n37_d100_fp32")
    assert programs({"BLOCK_N": 4, "NUM_PROGRAMS": 1024}, case) == 10
    big = get_op("layer_norm").cases("performance")[2]
    assert (
        programs({"BLOCK_N": 1, "NUM_PROGRAMS": MAX_NUM_PROGRAMS}, big) == MAX_NUM_PROGRAMS <= 65535
    )


@pytest.mark.parametrize("op", (*NORMS, "layer_norm_mul_dropout", "group_norm_mul_dropout"))
def test_the_weight_sum_picks_the_config_frozen_for_the_cases_dtype(op, cpu, monkeypatch):
    """bwd_dw adds fp32 partial rows whatever the case's dtype: its launcher must still look up
    the config frozen for the case's dtype (a bf16 case's, not an fp32 one's)."""
    from ops.ports import load_port

    spec, port = get_op(op), load_port(op)
    case = next(c for c in spec.cases("accuracy") if c.dtype == "bfloat16" and c.shape["N"] > 8)
    inputs = spec.make_inputs(case, cpu.device)
    state = spec.kernel_inputs("bwd_dw", inputs, spec.reference(inputs))
    asked = []
    pick = port._pick_config
    monkeypatch.setattr(
        port, "_pick_config", lambda kernel, *a: asked.append((kernel, a[1])) or pick(kernel, *a)
    )
    spec.launch("bwd_dw", state, None)
    assert asked == [("bwd_dw", "bfloat16")]

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

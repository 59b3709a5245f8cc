"""The coverage table (`autotune ops --upstream`, ops.coverage): every @triton.jit function of the
pinned FBGEMM wheel's kernel files is ported, inlined into a ported kernel or said not needed; a
new upstream kernel in a future pin fails here by name."""

from core.upstream import FBGEMM
from ops import all_ops
from ops.coverage import NOT_NEEDED, Coverage, jit_functions, source_rows

from .conftest import autotune_cli


def test_every_fbgemm_kernel_is_covered_or_said_why_not():
    rows = source_rows(FBGEMM)
    files = {row.file for row in rows}
    assert "triton/jagged/triton_jagged_tensor_ops.py" in files
    assert {f for f in files if f.startswith("sll/triton/")} >= {
        "sll/triton/triton_jagged_softmax.py",
        "sll/triton/triton_jagged_bmm_jagged_out.py",
    }
    assert len(rows) == 30  # fbgemm-gpu-cpu 1.9.0: 28 kernels and 2 helpers (tensor_elementwise_*)
    not_ported = sorted(row.function for row in rows if row.coverage is Coverage.NOT_PORTED)
    assert not_ported == [], f"FBGEMM kernels no port covers: {not_ported}"
    for row in rows:
        if row.coverage in (Coverage.PORTED, Coverage.INLINED):
            assert row.kernels, row
        if row.coverage is Coverage.INLINED:  # a helper: say which kernel it is compiled into
            assert row.note.startswith("a jit helper inlined into "), row


def test_every_name_a_kernel_gives_is_an_upstream_jit_function():
    """A port kernel naming an upstream function that is no jit function of its source's files
    (a typo, a function renamed in a new pin) is caught; so is a stale NOT_NEEDED entry."""
    rows = source_rows(FBGEMM)
    functions = {row.function for row in rows}
    for spec in all_ops().values():
        if spec.upstream.source is FBGEMM:
            for kernel in spec.kernels:
                assert set(kernel.upstream_kernels) <= functions, (spec.name, kernel.name)
    for source, file, function in NOT_NEEDED:
        if source == FBGEMM.name:
            assert (file, function) in {(r.file, r.function) for r in rows}


def test_jit_functions_by_ast():
    text = """
import triton
from triton import jit

@triton.jit
def helper(x):
    return x + 1

@triton.autotune(configs=[], key=[])
@triton.jit(do_not_specialize=["n"])
def kernel(x, n):
    helper(x)

@jit
def other(x):
    return kernel(x, 1)

def host(x):
    return helper(x)
"""
    assert jit_functions(text) == {"helper": set(), "kernel": {"helper"}, "other": {"kernel"}}


def test_the_command_prints_the_table():
    result = autotune_cli("ops", "--upstream", env={"AUTOTUNE_RECSYS_EXAMPLES": ""})
    assert result.returncode == 0, result.stderr
    for text in (
        "jagged_softmax_kernel",
        "jagged_softmax/fwd",
        "tensor_elementwise_add",
        "inlined",
    ):
        assert text in result.stdout
    assert "recsys-examples: not listed (AUTOTUNE_RECSYS_EXAMPLES is not set" in result.stdout

import json
import sys

import pytest
import torch

from core import upstream
from core.errors import UserError
from ops import all_ops

from .conftest import compiled_run, requires_gpu


def test_pinned_files_are_the_upstream_bytes():
    """Every op's upstream file in the installed wheel has the sha256 its spec pins."""
    root = upstream.package_root()
    for spec in all_ops().values():
        assert upstream.sha256_of(root / spec.upstream.file) == spec.upstream.sha256, spec.name


def test_loads_without_running_the_package_init(cpu):
    for name in [m for m in sys.modules if m == "fbgemm_gpu" or m.startswith("fbgemm_gpu.")]:
        del sys.modules[name]
    spec = all_ops()["jagged_dense_flash_attention"]
    module = upstream.load(spec.upstream.file, spec.upstream.sha256)
    assert hasattr(module, "jagged_dense_flash_attention_fwd_kernel")
    assert "fbgemm_gpu" not in sys.modules  # __init__.py (compiled ops) never ran
    assert module.__file__.endswith(spec.upstream.file)


def test_a_changed_file_is_refused():
    spec = all_ops()["jagged_to_padded_dense"]
    with pytest.raises(UserError, match="differs from the pinned source"):
        upstream.load(spec.upstream.file, "0" * 64)


@pytest.mark.parametrize(
    "op", ["jagged_dense_flash_attention", "jagged_to_padded_dense", "dense_to_jagged"]
)
def test_upstream_kernels_compute_the_op(op, cpu):
    """What the loader gives is upstream's op: fp32 results agree with the float64 golden."""
    spec = all_ops()[op]
    case = next(
        c for c in spec.cases("accuracy") if c.dtype == "float32" and spec.upstream_outputs(c)
    )
    inputs = spec.make_inputs(case, cpu.device)
    got = spec.run_upstream(inputs, case)
    golden = spec.reference(inputs)
    assert set(got) == set(spec.upstream_outputs(case))
    for name, value in got.items():
        want = spec.comparable(name, golden[name], inputs)
        have = spec.comparable(name, value, inputs).double()
        assert torch.allclose(have, want, rtol=1e-4, atol=1e-5), name


@requires_gpu
@pytest.mark.gpu
@pytest.mark.parametrize("op", ["jagged_to_padded_dense", "dense_to_jagged"])
def test_upstream_wrapper_on_cuda_equals_the_golden(op):
    """On CUDA the copy ops call upstream's own wrapper, compiled; it must give the golden bit
    for bit."""
    script = f"""
import json, torch
from ops import all_ops
spec = all_ops()[{op!r}]
case = spec.cases("accuracy")[1]
inputs = spec.make_inputs(case, torch.device("cuda"))
got = spec.run_upstream(inputs, case)
golden = spec.reference({{k: v.cpu() for k, v in inputs.items()}})
print(json.dumps({{n: torch.equal(v.cpu().double(), golden[n]) for n, v in got.items()}}))
"""
    equal = json.loads(compiled_run(script).strip().splitlines()[-1])
    assert equal and all(equal.values()), equal


def test_a_loaded_module_is_not_read_again(monkeypatch):
    """Ops load upstream inside timed calls: a second load must not read and hash the file."""
    spec = all_ops()["jagged_to_padded_dense"]
    first = upstream.load(spec.upstream.file, spec.upstream.sha256)
    monkeypatch.setattr(upstream, "sha256_of", lambda path: pytest.fail(f"read {path} again"))
    monkeypatch.setattr(upstream, "package_root", lambda: pytest.fail("looked the package up"))
    assert upstream.load(spec.upstream.file, spec.upstream.sha256) is first

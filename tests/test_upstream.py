import dataclasses
import json
import sys

import pytest
import torch

from core import upstream
from core.errors import UserError
from ops import all_ops

from .conftest import compiled_run, requires_gpu


def test_pinned_files_are_the_upstream_bytes():
    """Every FBGEMM op's upstream file in the installed wheel has the sha256 its spec pins."""
    root = upstream.package_root()
    for spec in (s for s in all_ops().values() if s.upstream.source is upstream.FBGEMM):
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


# -- recsys-examples: a checkout named by AUTOTUNE_RECSYS_EXAMPLES --------------------------------
RECSYS_OPS = [s for s in all_ops().values() if s.upstream.source is upstream.RECSYS_EXAMPLES]


def _fake_checkout(root, spec):
    """A checkout holding a changed copy of the op's file (the real one's bytes plus a comment
    where the checkout is here, else other bytes: either way not the pinned ones)."""
    real = upstream.RECSYS_EXAMPLES.missing() is None and upstream.RECSYS_EXAMPLES.root()
    path = root / spec.upstream.file
    path.parent.mkdir(parents=True)
    path.write_bytes((real / spec.upstream.file).read_bytes() if real else b"x = 1\n")
    path.write_bytes(path.read_bytes() + b"# changed\n")
    return path


def test_a_changed_checkout_file_is_refused_in_one_line(tmp_path, monkeypatch):
    """A checkout whose file is not the pinned one: one line naming the file and both hashes."""
    spec = next(s for s in RECSYS_OPS if s.name == "layer_norm")
    path = _fake_checkout(tmp_path, spec)
    source = dataclasses.replace(
        upstream.RECSYS_EXAMPLES, name="fake-recsys", setting="FAKE_CHECKOUT", imports=()
    )
    monkeypatch.setenv("FAKE_CHECKOUT", str(tmp_path))
    with pytest.raises(UserError) as refused:
        upstream.load(spec.upstream.file, spec.upstream.sha256, source)
    message = str(refused.value)
    assert "\n" not in message and spec.upstream.file in message
    assert upstream.sha256_of(path) in message and spec.upstream.sha256 in message


def test_without_a_checkout_upstream_says_why_and_the_port_still_runs(monkeypatch, cpu):
    monkeypatch.delenv("AUTOTUNE_RECSYS_EXAMPLES", raising=False)
    for spec in RECSYS_OPS:
        reason = spec.upstream.missing()
        assert reason and "\n" not in reason and "AUTOTUNE_RECSYS_EXAMPLES" in reason
        case = spec.cases("accuracy")[0]
        inputs = spec.make_inputs(case, cpu.device)
        assert spec.upstream_outputs(case) == () and spec.run_upstream(inputs, case) == {}
        assert spec.upstream_part("fwd", inputs, case) is None
        assert set(spec.run_port(inputs)) == set(spec.output_names)


requires_recsys = pytest.mark.skipif(
    upstream.RECSYS_EXAMPLES.missing() is not None,
    reason=upstream.RECSYS_EXAMPLES.missing() or "",
)


@requires_recsys
@pytest.mark.parametrize("op", [s.name for s in RECSYS_OPS])
def test_recsys_upstream_forward_computes_the_op(op, cpu):
    """The checkout's upstream forward (the interpreter) agrees with the float64 golden; the
    absolute `commons` import it makes is gone from sys.modules after it loads. An upstream that
    runs on CUDA only (addmm's: Triton's GPU autotuner, libdevice) loads, and gives nothing here."""
    spec = all_ops()[op]
    case = next(
        c for c in spec.cases("accuracy") if c.dtype == "float32" and spec.jagged_rows(c) > 1
    )
    inputs = spec.make_inputs(case, cpu.device)
    assert spec.upstream.load().__file__.endswith(spec.upstream.file)
    got = spec.run_upstream(inputs, case)
    assert "commons" not in sys.modules
    if not got:
        pytest.skip(f"{op}: upstream's forward runs on CUDA only")
    first = spec.output_names[0]  # the forward's output
    assert torch.allclose(got[first].double(), spec.reference(inputs)[first], rtol=1e-4, atol=1e-5)

"""Upstream's TMA path as a second upstream source of the baseline ("upstream_tma", issue 49 item
2): where the device can run it (ops.tma), through upstream with enable_tma=True, at its own
autotune pick, recorded and pinned as upstream's. No GPU here: the device's capability, Triton's
modules and upstream's functions are stood in for; the path itself is unverified on hardware."""

import subprocess
import sys
import types

import pytest
import torch
import triton.language as tl

from autotuner.backends.cpu import CpuBackend
from autotuner.baseline import baseline, upstream_picks
from ops import get_op, tma
from ops.spec import OpSpec
from storage import open_database

from .conftest import ROOT
from .test_check import CASE, OP
from .test_upstream_picks import COST, OUT, UPSTREAM, _launch, fresh_autotuner  # noqa: F401

CUDA = torch.device("cuda", 0)


def test_tma_is_cudas():
    assert "CUDA's, not cpu's" in tma.tma_missing(torch.device("cpu"))


@pytest.mark.parametrize(("capability", "missing"), [((8, 0), "sm_80"), ((9, 0), None)])
def test_tma_needs_sm90(monkeypatch, capability, missing):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: capability)
    said = tma.tma_missing(CUDA)
    assert said is None if missing is None else missing in said


def test_tma_needs_tritons_host_and_device_descriptors(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: (9, 0))
    monkeypatch.delattr(tl, "make_tensor_descriptor")
    assert "no tl.make_tensor_descriptor" in tma.tma_missing(CUDA)

    def no_descriptors(name):
        raise ImportError(name)

    monkeypatch.setattr(tma.importlib, "import_module", no_descriptors)
    assert "no triton.tools.tensor_descriptor" in tma.tma_missing(CUDA)


def test_ops_without_a_tma_path_have_no_source_and_nothing_missing():
    spec = get_op(OP)
    inputs = spec.make_inputs(spec.case(CASE), torch.device("cpu"))
    assert spec.upstream_tma_part("fwd", inputs, spec.case(CASE)) is None
    assert spec.upstream_tma_missing(torch.device("cpu")) is None


def test_hstu_attention_runs_upstream_with_enable_tma_where_the_device_can(monkeypatch, cpu):
    """Off a TMA device: no source, and the reason; on one: each part through upstream's
    functions with enable_tma True (upstream stood in for: it needs CUDA)."""
    spec = get_op("hstu_attention")
    case = spec.case("b3_h2_n36_d128_t1_c4_w0_fp32")
    inputs = spec.make_inputs(case, torch.device("cpu"))
    assert spec.upstream_tma_missing(torch.device("cpu"))
    assert all(spec.upstream_tma_part(p, inputs, case) is None for p in spec.parts)

    seen = []
    fake = types.SimpleNamespace(
        triton_hstu_attention_fwd=lambda *a: seen.append(("fwd", a[10])),
        triton_hstu_attention_bwd=lambda *a: seen.append(("bwd", a[14], a[15])),
        triton_cached_hstu_mha=lambda *a: seen.append(("cached_fwd", a[9])),
    )
    monkeypatch.setattr("ops.hstu_attention.tma_missing", lambda device: None)
    monkeypatch.setattr(type(spec), "_runs_upstream", lambda self, inputs, case: True)
    monkeypatch.setattr(type(spec.upstream), "load", lambda self: fake)
    for part in spec.parts:
        spec.upstream_tma_part(part, inputs, case)()
        spec.upstream_part(part, inputs, case)()
    n = case.shape["max_seq_len"]
    assert seen == [("fwd", True), ("fwd", False), ("bwd", True, n), ("bwd", False, n),
                    ("cached_fwd", True), ("cached_fwd", False)]  # fmt: skip


def test_a_fresh_record_tunes_again_under_a_key_already_tuned():
    """upstream's enable_tma is no key of its autotune: a second source's pick is its own."""
    assert upstream_picks.record([UPSTREAM], _launch)["_fill_block"]["BLOCK"] == 16
    COST.update({16: 3.0})
    assert upstream_picks.record([UPSTREAM], _launch)["_fill_block"]["BLOCK"] == 16  # cached
    assert upstream_picks.record([UPSTREAM], _launch, fresh=True)["_fill_block"]["BLOCK"] == 32
    assert upstream_picks.record([UPSTREAM], _launch)["_fill_block"]["BLOCK"] == 16  # given back


def test_the_baseline_times_each_upstream_source_at_its_own_pick(monkeypatch, tmp_path):
    """upstream and upstream_tma launch the same autotuned kernel, timed in the same rounds:
    each recorded at its own pick, stored with it, and launched at it every timed call."""
    launched = {"upstream": [], "upstream_tma": []}

    def call(source, costs):
        def run():
            COST.update(costs)  # what makes the two tune to different picks
            _launch()
            launched[source].append(OUT[0].clone())  # read after: the baseline checks reads

        return run

    plain, with_tma = call("upstream", {16: 1.0}), call("upstream_tma", {16: 3.0})
    monkeypatch.setattr(OpSpec, "upstream_tma_part", lambda self, part, i, c: with_tma)
    spec = get_op(OP)
    monkeypatch.setattr(type(spec), "upstream_part", lambda self, part, i, c: plain)
    monkeypatch.setattr(upstream_picks, "modules_of", lambda spec: [UPSTREAM])
    db = open_database(f"sqlite:///{tmp_path}/b.db")
    rows = baseline.record_baselines(db, spec, CpuBackend(), [spec.case(CASE)])
    picks = {r.source: r.configs["_fill_block"]["BLOCK"] for r in rows if r.source in launched}
    assert picks == {"upstream": 16, "upstream_tma": 32}
    assert {int(x) for x in launched["upstream"]} == {16}
    assert {int(x) for x in launched["upstream_tma"]} == {32}
    assert len(upstream_picks.autotuners([UPSTREAM])["_fill_block"].configs) == 2


def test_the_ops_import_no_triton():
    """Loading every op spec imports no Triton: a `triton.language` imported before the `cpu`
    backend sets TRITON_INTERPRET=1 keeps compiled `@jit` helpers (`tl.zeros`), which
    triton-ascend 3.2's interpreter refuses inside a kernel (ops.tma once did so)."""
    probe = "import sys; from ops import all_ops; all_ops(); print(sorted(m for m in sys.modules if m.split('.')[0] == 'triton'))"
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "[]"

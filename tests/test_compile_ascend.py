"""The Ascend compiler in the loop, without an NPU: triton-ascend 3.2.0 and ascendnpu-ir's bishengir
in `.venv-ascend` (`.ci/ascend-env` makes it), run in a fresh process there.

"Planned" is the compiler's word for a config every BiShengIR pass accepted, memory planning
included; with no CANN here the compile stops at its code generator `hivmc`. Nothing runs."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT

ASCEND = ROOT / ".venv-ascend" / "bin"
#: The four socs as twins of one compiler binary and one memory size each (910B and 910_93:
#: bishengir-compile, 192 KiB of UB; 950PR and 950DT: bishengir-compile-a5, 248 KiB). Twins
#: gave the same verdict and the same planned bytes on all 911 (kernel, case) defaults of the
#: compile matrix (docs/runs/2026-12-02_issue25_dbcb746_ascend_compile_matrix_cases_resumed.jsonl.gz),
#: so each test below compiles on one of each pair, and the two tests on different ones: every
#: soc is compiled for, each compile once.
DEFAULT_SOCS = ("910B", "950PR")
SPACE_SOCS = ("910_93", "950DT")


def _compiler_problem() -> str | None:
    if not (ASCEND / "python").exists():
        return "no .venv-ascend: create it with .ci/ascend-env (.ci/run does)"
    probe = subprocess.run(
        [ASCEND / "python", "-c", "import ascendnpuir"], capture_output=True, cwd=ROOT
    )
    if probe.returncode != 0:
        return "ascendnpu-ir is not installed in .venv-ascend (.ci/ascend-env installs it)"
    return None


requires_compiler = pytest.mark.skipif(
    _compiler_problem() is not None, reason=_compiler_problem() or ""
)


def in_ascend_env(script: str, *args: str, timeout: float = 900) -> str:
    """Run `script` with `args` in .venv-ascend from the checkout; its stdout."""
    done = subprocess.run(
        [ASCEND / "python", "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            "PATH": str(ASCEND) + ":/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "HOME": str(Path.home()),
        },
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


CAUGHT = """
    import json
    from autotuner.search.pipeline import Job, Pipeline, Proposal
    from autotuner.backends import BackendSpec
    from autotuner.search.workers import COMPILE_WITHOUT_DEVICE, Worker
    from core.socs import BackendKind
    from ops import get_op

    PLANNED = {"BLOCK_L": 8, "BLOCK_D": 4, "multibuffer": False}
    OVER = [{"BLOCK_L": 256, "BLOCK_D": 64, "multibuffer": False},
            {"BLOCK_L": 64, "BLOCK_D": 256, "multibuffer": True}]

    class Device:
        '''The timing worker: it fails the test if a config the compiler refused reaches it.'''
        prepared, busy = None, False
        def __init__(self):
            self.timed = []
        def send(self, request):
            self.busy = True
        def receive(self, timeout):
            self.busy = False
            return True
        def prepare(self, *args):
            pass
        def call(self, request, timeout):
            kind, config = request
            assert config not in OVER, f"timed {config}, which the compiler refused"
            self.timed.append(config)
            return {"ok": True, "timing": {"median_ms": 1.0}, "error": 0.0, "extra": {}}

    case = get_op("jagged_softmax").case("b2048_n256_d64_fp16")
    device = Device()
    pipeline = Pipeline(device, [Worker(BackendSpec.make(BackendKind.NPU, "910B"), mode=COMPILE_WITHOUT_DEVICE)], timeout_s=300)
    pipeline.prepare(Job("jagged_softmax", "fwd", case, "test"))
    outcomes = []
    proposals = (Proposal(c, "test", i, i) for i, c in enumerate([*OVER, PLANNED]))
    try:
        pipeline.run(proposals, lambda p, o: outcomes.append([p.config, o]), lambda p: None)
    finally:
        pipeline.compilers[0].close()
    print(json.dumps({"timed": device.timed, "outcomes": outcomes}))
"""


@requires_compiler
def test_configs_the_compiler_refuses_never_reach_the_device():
    """Every proposal is compiled first: a UB overflow is a failed trial of its category, with
    the compiler's own numbers, and the timing worker never sees it."""
    found = json.loads(in_ascend_env(CAUGHT).strip().splitlines()[-1])
    assert found["timed"] == [{"BLOCK_L": 8, "BLOCK_D": 4, "multibuffer": False}]
    refused = [o for _, o in found["outcomes"] if not o["ok"]]
    assert [o["category"] for o in refused] == ["ub_overflow", "ub_overflow"]
    assert all("ub overflow, requires" in o["message"] for o in refused)
    assert all(o["extra"]["compile_verdict"] == "ub_overflow" for o in refused)
    assert all(o["extra"]["required_bits"] > 1572864 for o in refused)  # the 910B's 192 KiB
    (planned,) = [o for _, o in found["outcomes"] if o["ok"]]
    assert planned["extra"]["compile_verdict"] == "planned"
    assert 0 < planned["extra"]["planned_memory"]["ub"] <= 192 * 1024


DEFAULTS = """
    import json, sys
    from autotuner.backends import soc_profile
    from autotuner.search.compiles import CompileFarm
    from autotuner.search.space import space_for
    from autotuner.search.warm_starts import from_frozen
    from ops import all_ops
    from storage import open_database

    db = open_database("sqlite:///" + sys.argv[1])
    refused = []
    for soc in sys.argv[2:]:
        profile = soc_profile(soc)
        with CompileFarm(db, soc, jobs=2) as farm:
            for name, spec in all_ops().items():
                for kernel in spec.kernels:
                    space = space_for(kernel, profile.launch_options, profile.option_defaults)
                    case = spec.cases("accuracy")[0]
                    jobs = [(case, space.complete(kernel.default(case)))] + [
                        (spec.case(s.case), space.complete(s.config))
                        for s in from_frozen(name, kernel.name)
                        if s.soc == soc
                    ]
                    for case, config in jobs:
                        (verdict,) = farm.compile(name, kernel.name, case, [config]).values()
                        if not verdict[1].ok:
                            refused.append([soc, name, kernel.name, case.name, config,
                                            verdict[1].category, verdict[1].message])
    print(json.dumps(refused))
"""
#: Default configs the compiler refuses for their memory, each named in docs/ascend.md's compiler
#: section with what was done about it: (soc, op, kernel).
KNOWN_MEMORY_REFUSALS: set[tuple[str, str, str]] = set()


@requires_compiler
@pytest.mark.parametrize("soc", DEFAULT_SOCS)
def test_every_default_and_frozen_config_plans(tmp_path, soc):
    """Each kernel's default config on its first (accuracy) case, and the configs frozen for the
    soc on their cases, compiled for one soc of each twin pair (`DEFAULT_SOCS`); a refusal for a
    reason other than memory fails the test with the kernel, the soc and the compiler's first
    error line. The default configs of
    every case, and the frozen ones of every soc, are in the compile matrix (docs/benchmarks.md)."""
    out = in_ascend_env(DEFAULTS, str(tmp_path / "compiles.db"), soc, timeout=1200)
    found = json.loads(out.strip().splitlines()[-1])
    other = [r for r in found if not r[5].endswith("overflow")]
    assert not other, "\n".join(
        f"{soc} {op}:{k} {case} {cfg}: {cat}: {msg}" for soc, op, k, case, cfg, cat, msg in other
    )
    memory = {(soc, op, k) for soc, op, k, *_ in found}
    assert memory <= KNOWN_MEMORY_REFUSALS, sorted(memory - KNOWN_MEMORY_REFUSALS)


@requires_compiler
@pytest.mark.parametrize("soc", SPACE_SOCS)
def test_space_compile_agrees_with_the_corrected_model(tmp_path, soc):
    """`autotune space --compile` on one small kernel (50 configs, some over the unified buffer by
    the model): `feasible` is exactly what the compiler planned, the static model (the fast first
    cut) rejects none of it, and every config it refuses for memory the compiler refuses too."""
    done = subprocess.run(
        [ASCEND / "python", "-m", "autotuner", "space", "--op", "jagged_flash_attention_basic",
         "--kernel", "bwd_preprocess", "--case", "b1024_n256_d128_bf16", "--soc", soc, "--compile",
         "--json", "--jobs", "2", "--db", f"sqlite:///{tmp_path / 'compiles.db'}"],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
        env={"PATH": str(ASCEND) + ":/usr/bin:/bin", "PYTHONPATH": str(ROOT),
             "HOME": str(Path.home())},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["judged_by"].startswith(f"the compiler: {soc} as Ascend")
    assert report["compiled"]["configs"] == 50
    assert report["compiled"]["model_rejects_planned"] == 0
    assert report["feasible"], "the compiler planned no config"
    # What the model refuses for memory the compiler refuses too, or plans only by turning
    # multibuffer off (bishengir-compile 1.2.0 does so and says so): the single-buffered twin.
    assert all(f["model"] is None or f["multibuffer_dropped"] for f in report["feasible"])
    assert all(f["verdict"] == "planned" for f in report["feasible"])
    by_model = [r for r in report["rejected"] if r["model"] is not None]
    assert by_model  # the model's memory verdicts are tested, not only its silence
    assert all(
        r["compiler"]["category"].endswith("overflow") or r["compiler"]["multibuffer_dropped"]
        for r in by_model
    ), [(r["config"], r["compiler"]["category"]) for r in by_model]


#: Makes a port compile-only many times in one process, then asks its tl.dot precision for a
#: GPU's inputs; argv[1]: the Ascend soc compiled for, or "device" (a GPU's compile workers).
WARMED_PRECISION = """
    import sys, types
    from autotuner.backends import compile
    from ops import get_op
    soc = sys.argv[1]
    compile.activate(None if soc == "device" else compile.ascend_compiler(soc))
    spec = get_op("jagged_dense_bmm")
    port = compile._warmed(spec)
    for _ in range(sys.getrecursionlimit() + 10):
        assert compile._warmed(spec) is port
    print(port._precision(True, types.SimpleNamespace(type="cuda")))
"""


def test_a_port_is_made_compile_only_once_per_process_and_keeps_a_gpus_precision():
    """A compile worker compiles thousands of configs of one port: making the port compile-only
    again at each compile nested its tl.dot precision hook one call deeper every time, and the
    worker's tl.dot compiles died of a RecursionError after about a thousand. A GPU's compile
    workers (ahead of timing) compile for the inputs' device: the NPU's hf32 failed every fp32
    tl.dot trial of the H200's M2 round."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WARMED_PRECISION), "device"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "tf32"


@requires_compiler
def test_compiling_for_an_npu_asks_tl_dot_precision_as_on_an_npu():
    """Without its device the inputs are on the CPU: an Ascend compile asks for hf32."""
    assert in_ascend_env(WARMED_PRECISION, "910B").strip() == "hf32"


def test_a_compiler_crash_that_does_not_repeat_is_not_the_verdict(monkeypatch):
    """triton-adapter-opt (triton-ascend 3.2.0) aborts now and then on an input it compiles
    otherwise: a crash is tried again, and only a crash on every attempt is the verdict."""
    from autotuner.backends import compile as compiling
    from autotuner.vocabulary import Failure, Fit

    monkeypatch.setattr(compiling, "_session", compiling._Session(None))
    crash = compiling.CompileResult(Failure.CRASH, "Assertion `abstractType' failed.")
    for outcomes, verdict in (
        ([crash, compiling.CompileResult(Fit.PLANNED)], Fit.PLANNED),
        ([crash] * compiling.CRASH_ATTEMPTS, Failure.CRASH),  # a fourth attempt would find none
    ):
        given = iter(outcomes)
        launches = compiling._Launches()
        monkeypatch.setattr(launches, "_compile", lambda *_, given=given: next(given))
        launches.run(None, (1,), (), {})
        (result,) = launches.results
        assert result.category == verdict
        assert next(given, None) is None  # every outcome asked for: one attempt each
        if verdict == Fit.PLANNED:
            assert "crashed on 1 earlier attempt(s): Assertion" in result.message

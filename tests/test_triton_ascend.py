"""Every port kernel parses and computes correctly under triton-ascend's frontend (interpreter), and
what the service reads of the installed triton-ascend."""

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, verify_all_passed

ASCEND = ROOT / ".venv-ascend" / "bin"


@pytest.mark.skipif(
    not (ASCEND / "autotune").exists(),
    reason="no .venv-ascend: create it with .ci/ascend-env (.ci/run does)",
)
def test_verify_all_under_triton_ascend(tmp_path):
    version = subprocess.run(
        [
            ASCEND / "python",
            "-c",
            "import importlib.metadata as m; print(m.version('triton-ascend'))",
        ],
        capture_output=True,
        text=True,
    )
    assert version.stdout.strip() == "3.2.0", version.stderr
    result = subprocess.run(
        [
            ASCEND / "autotune",
            "verify",
            "--all",
            "--soc",
            "cpu",
            "--db",
            f"sqlite:///{tmp_path}/v.db",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": str(ASCEND), "COLUMNS": "250", "HOME": str(Path.home())},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert verify_all_passed(summary), summary


#: Run in .venv-ascend against the real triton-ascend 3.2.0: what the service reads of it, and the
#: static model and the compiler-output readers as they run beside it.
PROBE = """
import inspect, json, subprocess
import triton.testing
from autotuner.backends import soc_profile, triton_ascend
from autotuner.backends.npu import npu_soc
from autotuner.backends import compile_verdict
from autotuner.backends.compile_verdict import classify
from autotuner.search.space_report import describe

compiler = triton_ascend.installed()
cc = subprocess.CalledProcessError(
    1, ["bishengir-compile"], b"", b"error: cc overflow, requires 2097152 bits while 1048576 bits available!"
)
fwd = ("jagged_dense_flash_attention", "fwd", "b1024_n256_d128_t128_bf16")
print(json.dumps({
    "compiler": {**compiler.__dict__, "options": sorted(compiler.options)},
    "refusals": {soc: triton_ascend.cannot_build(soc, compiler) for soc in ("910B", "910_93", "950PR")},
    "defaults": {soc: soc_profile(soc).option_defaults["multibuffer"] for soc in ("910B", "950PR")},
    "simd": describe(*fwd, "910B"),
    "simt": describe(*fwd, "950PR", "simt"),
    "categories": [classify(cc), classify(RuntimeError("error: cbuf overflow, requires"))],
    "fallback": compile_verdict.multibuffer_fell_back("[NOTE] Due to Ub overflow, automatically set enable-auto-multi-buffer to false; compilation then succeeded."),
    "socs": [npu_soc(n) for n in ("Ascend910B2", "Ascend910_9391", "Ascend950PR_9599", "Ascend910_9599")],
    "profiler": list(inspect.signature(triton.testing.do_bench_npu).parameters),
}))
"""


@pytest.mark.skipif(
    not (ASCEND / "python").exists(),
    reason="no .venv-ascend: create it with .ci/ascend-env (.ci/run does)",
)
def test_what_the_service_reads_of_triton_ascend_3_2():
    result = subprocess.run(
        [ASCEND / "python", "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": str(ASCEND), "PYTHONPATH": str(ROOT), "HOME": str(Path.home())},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    options = found["compiler"].pop("options")
    # The launch options 3.2.0's NPUOptions declares: what a compiler-option tunable can name.
    assert {"multibuffer", "unit_flag", "enable_hivm_auto_cv_balance", "sync_solver"} <= set(
        options
    )
    # The capability gate: 3.2.0 hard-codes compile_on_910_95 = False, multibuffer on.
    assert found["compiler"] == {
        "version": "3.2.0",
        "targets_950": False,
        "multibuffer": True,
        "has_compile_mode": True,
    }
    assert found["refusals"]["910B"] is None and found["refusals"]["910_93"] is None
    assert found["refusals"]["950PR"].startswith("triton-ascend 3.2.0 does not run on the 950PR")
    assert found["defaults"] == {"910B": True, "950PR": False}
    # SIMD: no warps; multibuffer doubles only the streamed tiles, so BLOCK_T=128, BLOCK_L=32
    # fits even the 910B multibuffered. SIMT: triton-ascend's warps, compile_mode=simt_only.
    simd, simt = found["simd"], found["simt"]
    assert [t["name"] for t in simd["tunables"]] == ["BLOCK_T", "BLOCK_L", "multibuffer"]
    assert {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True} in simd["feasible"]
    assert [t["values"] for t in simt["tunables"]][2:] == [[8, 16, 32, 64], ["simt_only"]]
    assert found["categories"] == ["cc_overflow", "cbuf_overflow"] and found["fallback"] is True
    assert found["socs"] == ["910B", "910_93", "950PR", "950PR"]
    # The profiler method NpuBackend.cross_check calls, as 3.2.0 declares it.
    assert found["profiler"][:3] == ["fn", "warmup", "active"]

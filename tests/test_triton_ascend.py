"""Every port kernel parses and computes correctly under triton-ascend's frontend (interpreter)."""

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

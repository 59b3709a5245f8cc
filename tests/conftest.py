"""Tests run kernels under the Triton interpreter; GPU tests skip with a reason where there is none."""

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

os.environ["TRITON_INTERPRET"] = "1"
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")

from autotuner.backends import get_backend  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KIB = 1024  # the Ascend memory sizes the tests state are in KiB


@pytest.fixture(scope="session")
def cpu():
    return get_backend("cpu")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A scratch copy of the project's ATK folders and frozen_configs, as AUTOTUNE_ROOT."""
    for part in ("experimental", "frozen_configs"):
        if (ROOT / part).exists():
            shutil.copytree(
                ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__")
            )
    monkeypatch.setenv("AUTOTUNE_ROOT", str(tmp_path))
    _forget_ports()
    yield tmp_path
    _forget_ports()


def _forget_ports() -> None:
    """Drop loaded port modules, so the next load reads the file of the current AUTOTUNE_ROOT."""
    for name in [n for n in sys.modules if n.startswith("_autotune_ports_")]:
        del sys.modules[name]


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


requires_gpu = pytest.mark.skipif(
    not cuda_available(), reason="needs a CUDA GPU; none on this machine"
)


def autotune_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m autotuner ARGS` in a fresh process run in `cwd` (the checkout under test), its
    output captured as text, on a terminal wide enough for the tables; `env` is added to this
    process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "250", **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def compiled_run(script: str) -> str:
    """Run `script` in a fresh Python without TRITON_INTERPRET (set above for this process, under
    which kernels run on the host even with CUDA tensors) and return its stdout; a GPU test's
    way to run the compiled kernels."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def verify_all_passed(summary: str) -> bool:
    """The last line of `autotune verify --all --soc cpu` says every output of every op's
    accuracy cases passed."""
    import re

    from ops import all_ops

    cases = sum(len(spec.cases("accuracy")) for spec in all_ops().values())
    return re.match(rf"(\d+) outputs of {cases} cases: \1 passed, 0 failed", summary) is not None

"""One checkout, one truth: with the package of one clone on the path, a command run in a second
clone whose op specs differ stops in one line, and runs where they are the same."""

import os
import shutil
import subprocess
import sys

from .conftest import ROOT

PACKAGES = ("autotune", "autotuner", "core", "ops", "storage", "api")


def git(*args: str, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def run_in(clone, installed) -> subprocess.CompletedProcess:
    """`autotune ops` in `clone` with the package of `installed` first on the path, as the
    console script runs it (`-P`: the current directory is not put on the path)."""
    env = {k: v for k, v in os.environ.items() if k != "AUTOTUNE_ROOT"}
    env["PYTHONPATH"] = str(installed)
    return subprocess.run(
        [sys.executable, "-P", "-m", "autotuner", "ops"],
        cwd=clone, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_two_clones_one_environment(tmp_path):
    origin = tmp_path / "origin"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, origin / package,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (origin / "experimental" / "triton" / "atk_test").mkdir(parents=True)
    (origin / "experimental" / "triton" / "atk_test" / "README.md").write_text("ports\n")
    git("init", "-q", cwd=origin)
    git("add", "-A", cwd=origin)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", cwd=origin)
    first, second = tmp_path / "first", tmp_path / "second"
    git("clone", "-q", str(origin), str(first), cwd=tmp_path)
    git("clone", "-q", str(origin), str(second), cwd=tmp_path)

    same = run_in(second, installed=first)  # the same specs: nothing to say
    assert same.returncode == 0, same.stderr

    spec = second / "ops" / "jagged_softmax.py"
    spec.write_text(spec.read_text() + "\n# an M2 experiment\n")
    mixed = run_in(second, installed=first)
    assert mixed.returncode == 2 and mixed.stdout == ""
    (line,) = mixed.stderr.strip().splitlines()
    assert "the installed autotune belongs to another checkout" in line
    assert f"not those of {second}" in line and "jagged_softmax.py differ" in line

    assert run_in(second, installed=second).returncode == 0

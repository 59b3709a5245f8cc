"""benchmarks/h200_round.sh records the commit of the tree it runs: on a tree that differs from
its HEAD (a device copy whose .git lags) it needs AUTOTUNE_PROJECT_COMMIT, else it stops."""

import shutil
import subprocess

import pytest

from .conftest import ROOT


def run(repo, env):
    return subprocess.run(
        ["bash", "h200_round.sh", "H200", str(repo / "out"), "no-such-step", "addmm"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    shutil.copy(ROOT / "benchmarks" / "h200_round.sh", tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "h200_round.sh"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    return tmp_path


def test_a_tree_other_than_head_needs_the_commit_named(repo):
    env = {"PATH": "/usr/bin:/bin"}
    assert "unknown step" in run(repo, env).stderr  # clean: it goes on to the step
    (repo / "h200_round.sh").write_text((repo / "h200_round.sh").read_text() + "\n")
    refused = run(repo, env)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "AUTOTUNE_PROJECT_COMMIT" in refused.stderr
    named = run(repo, {**env, "AUTOTUNE_PROJECT_COMMIT": "0123abc"})
    assert "unknown step" in named.stderr

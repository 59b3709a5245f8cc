"""The front door: README.md stays short and true, and the docs it sends you to exist.

README.md is at most 200 lines; `.ci/run` ends with the README's test command; every `autotune`
command has a README row and a docs/cli.md section; every relative link of README.md and docs/
resolves; every `benchmarks/X` the docs cite exists, or names the commit that had it
(`benchmarks/X@sha`); the kept benchmarks call ports through their public names only.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import typer

from autotune.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
#: Markdown the README sends readers to, and the READMEs that cite benchmarks too.
PAGES = [README, *DOCS, ROOT / "benchmarks" / "README.md"]
CITING = [*PAGES, *sorted((ROOT / "experimental" / "triton" / "atk_test").glob("*/README.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CITED = re.compile(r"benchmarks/([A-Za-z0-9_-]+\.(?:py|sh))(?:@([0-9a-f]{7,40}))?")
#: A port's private name reached into: `port._name`, `x.port._name`, or imported from a port.
PRIVATE = re.compile(
    r"\bport\._[a-z]|^\s*from\s+(?:ops|experimental)\S*\s+import\s+(?:.*[\s,(])?_[a-z]", re.M
)


def commands() -> list[str]:
    return sorted(typer.main.get_command(app).commands)


def test_the_readme_is_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_ci_ends_with_the_readme_test_command():
    text = README.read_text(encoding="utf-8")
    block = text.split("## The two commands", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    test_command = lines[lines.index("# 2. run the tests") + 1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()
    assert ci[-1] == test_command


def test_the_commands_are_read_from_the_parser():
    assert {"run", "verify", "freeze", "import", "reference-server"} <= set(commands())


@pytest.mark.parametrize("name", commands())
def test_every_command_has_a_readme_row_and_a_cli_section(name):
    rows = [
        line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| ")
    ]
    assert any(row.startswith(f"| `autotune {name}` |") for row in rows), name
    headings = [
        line
        for line in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]
    assert any(f"`autotune {name}`" in heading for heading in headings), name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if not path or re.match(r"[a-z]+:", path):
            continue  # an anchor of the page itself, or a URL
        if not (page.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def shallow() -> bool:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
        capture_output=True,
        text=True,
    )
    return out.returncode != 0 or out.stdout.strip() != "false"


def test_every_cited_benchmark_exists_or_names_the_commit_that_had_it():
    missing, pinned = [], set()
    for page in CITING:
        for name, sha in CITED.findall(page.read_text(encoding="utf-8")):
            if sha:
                pinned.add((sha, name))
            elif not (ROOT / "benchmarks" / name).is_file():
                missing.append(f"{page.relative_to(ROOT)}: benchmarks/{name}")
    assert missing == []
    assert pinned, "the docs cite the removed one-off benchmarks by commit"
    if shallow():
        pytest.skip("a shallow clone: the commits of pinned benchmarks may be absent")
    for sha, name in sorted(pinned):
        found = subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}:benchmarks/{name}"],
            capture_output=True,
        )
        assert found.returncode == 0, f"benchmarks/{name}@{sha}: not in that commit"


def test_kept_benchmarks_use_no_private_port_names():
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert scripts
    reaching = [p.name for p in scripts if PRIVATE.search(p.read_text(encoding="utf-8"))]
    assert reaching == []


def test_the_private_name_pattern_catches_both_forms():
    assert PRIVATE.search("config = port._pick(soc)")
    assert PRIVATE.search("kernel = f.port._jagged_dense_add_kernel")
    assert PRIVATE.search("from ops.ports import load_port, _hidden\n")
    assert not PRIVATE.search("from ops.ports import load_port, picked_config\n")

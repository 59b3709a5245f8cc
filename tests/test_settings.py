"""One settings object: every knob listed, documented and read from AUTOTUNE_*, the effort levels,
and no module reading an AUTOTUNE_ variable behind its back."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autotuner import settings as settings_module
from autotuner.search.settle import Rules, retime_candidates
from autotuner.search.study import Plan
from autotuner.settings import EFFORTS, STANDARD, Effort, Settings

ROOT = Path(__file__).resolve().parents[1]

#: Every field of `Settings`: a new knob is added here, and documented where it is declared.
KNOBS = [
    "db",
    "precision_level",
    "heartbeat_s",
    "stale_after_s",
    "api_token",
    "import_max_bytes",
    "gpu_soc",
    "min_gain",
    "check_threshold",
    "check_contention_noise",
    "baseline_round_spread",
    "baseline_warm_jobs",
    "verify_jobs_per_device",
    "optuna_dashboard_url",
    "reference_token",
    "reference_max_request_bytes",
    "reference_max_output_bytes",
    "reference_max_requests",
    "reference_timeout_s",
    "reference_attempts",
    "max_case_bytes",
    "effort",
    "compile_workers",
    "project_commit",
    "debug",
]

#: The AUTOTUNE_ variables read or written outside `Settings`, (file, variable) -> why.
ALLOWED = {
    ("core/paths.py", "AUTOTUNE_ROOT"): "core lies below the settings; tests point it per test",
    ("ops/__init__.py", "AUTOTUNE_OPS_MODULES"): "ops lies below the settings",
    ("autotuner/backends/compiler_log.py", "AUTOTUNE_REAL_COMPILER"): "passed to the wrapper",
    ("autotuner/backends/compiler_log.py", "AUTOTUNE_COMPILER_LOG"): "passed to the wrapper",
    ("autotuner/backends/compile.py", "AUTOTUNE_SAVE_TEMPS"): "passed to the compiler wrapper",
}
#: The standard level is what `autotune run` did before there were levels.
OLD_DEFAULTS = {"trials": 48, "polish": True, "finals": 3, "retime_rounds": 5, "retime_reps": 20}


def test_every_knob_is_listed_and_documented():
    assert list(Settings.model_fields) == KNOBS
    tree = ast.parse((ROOT / "autotuner/settings.py").read_text(encoding="utf-8"))
    lines = (ROOT / "autotuner/settings.py").read_text(encoding="utf-8").splitlines()
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings"]
    fields = [n for n in cls.body if isinstance(n, ast.AnnAssign)]
    for field in fields:
        above = lines[field.lineno - 2].strip()
        assert above.startswith("#:"), f"{field.target.id} has no `#:` line above it"


@pytest.mark.parametrize(
    ("variable", "text", "field", "value"),
    [
        ("AUTOTUNE_DB", "sqlite:///x.db", "db", "sqlite:///x.db"),
        ("AUTOTUNE_MIN_GAIN", "0.02", "min_gain", 0.02),
        ("AUTOTUNE_EFFORT", "quick", "effort", "quick"),
        ("AUTOTUNE_COMPILE_WORKERS", "3", "compile_workers", 3),
        ("AUTOTUNE_PROJECT_COMMIT", "abc123", "project_commit", "abc123"),
        ("AUTOTUNE_DEBUG", "1", "debug", True),
        ("AUTOTUNE_MAX_CASE_BYTES", "1KiB", "max_case_bytes", 1024),
    ],
)
def test_the_environment_overrides_a_knob(monkeypatch, variable, text, field, value):
    monkeypatch.setenv(variable, text)
    assert getattr(Settings(), field) == value


def test_a_wrong_knob_is_one_line_naming_its_variable(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_EFFORT", "heroic")
    settings_module.settings.cache_clear()
    try:
        with pytest.raises(settings_module.UserError, match="^AUTOTUNE_EFFORT='heroic': "):
            settings_module.settings()
    finally:
        settings_module.settings.cache_clear()


def test_standard_effort_is_the_old_defaults():
    assert Effort(**OLD_DEFAULTS) == STANDARD
    assert Settings.model_fields["effort"].default == "standard"
    assert list(EFFORTS) == ["quick", "standard", "thorough"]
    assert Rules(0.01, 0.01, 5, 20).finals == OLD_DEFAULTS["finals"]
    assert retime_candidates.__defaults__ == (OLD_DEFAULTS["finals"],)
    assert Plan.make.__defaults__[-1] is OLD_DEFAULTS["polish"]


def test_levels_grow_from_quick_to_thorough():
    quick, standard, thorough = EFFORTS.values()
    for name in OLD_DEFAULTS:
        assert getattr(quick, name) <= getattr(standard, name) <= getattr(thorough, name)


READ = re.compile(
    r"""(?:os\.environ(?:\.get|\.setdefault|\.pop)?|getenv)\s*[\[(]\s*["'](AUTOTUNE_[A-Z_]+)"""
)


def test_no_module_reads_an_autotune_variable_outside_settings():
    found = set()
    for package in ("autotuner", "api", "storage", "core", "ops", "autotune"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for variable in READ.findall(text):
                found.add((path.relative_to(ROOT).as_posix(), variable))
    assert found - set(ALLOWED) == set(), "read it through autotuner.settings"
    assert set(ALLOWED) <= found, "an allowed read is gone: drop it from ALLOWED"


class _Ran(Exception):
    pass


@pytest.mark.parametrize(
    ("args", "env", "trials", "effort"),
    [
        ([], {}, 48, "standard"),
        (["--effort", "quick"], {}, 16, "quick"),
        ([], {"AUTOTUNE_EFFORT": "thorough"}, 128, "thorough"),
        (["--effort", "quick", "--trials", "25%"], {"AUTOTUNE_EFFORT": "thorough"}, 0.25, "quick"),
    ],
)
def test_run_takes_the_effort_level_and_explicit_flags_override_it(
    monkeypatch, tmp_path, args, env, trials, effort
):
    """`autotune run --effort`, else AUTOTUNE_EFFORT, else standard; `--trials` wins over the
    level's budget."""
    from typer.testing import CliRunner

    from autotune.cli import app
    from autotuner.search import runner

    asked = {}

    def fake_run(request, **kwargs):
        asked.update(trials=request.trials, effort=request.effort)
        raise _Ran

    monkeypatch.setattr(runner, "run", fake_run)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings_module.settings.cache_clear()
    try:
        result = CliRunner().invoke(
            app,
            ["run", "--op", "silu", "--soc", "cpu", "--db", f"sqlite:///{tmp_path}/a.db", *args],
        )
    finally:
        settings_module.settings.cache_clear()
    assert isinstance(result.exception, _Ran), result.output
    assert asked["trials"] == trials and asked["effort"] == EFFORTS[effort]


def test_an_unknown_effort_is_refused():
    from typer.testing import CliRunner

    from autotune.cli import app

    result = CliRunner().invoke(app, ["run", "--op", "silu", "--soc", "cpu", "--effort", "heroic"])
    assert (
        str(result.exception) == "unknown --effort 'heroic'; use one of quick, standard, thorough"
    )

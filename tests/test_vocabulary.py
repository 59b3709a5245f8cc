"""Meanings are typed, not read from strings: a verdict's outcome, a failure's category, a
proposal's source, a backend's kind and a config key's role each have their type
(`autotuner.search.verdict`, `autotuner.vocabulary`, `core.socs.BackendKind`, `ops.tunable.Role`),
and no engine code reads one from a string prefix, a literal or a regex (issue 53). Also: the
verdict's JSON form round-trips, and the free dicts stored before it had a version still load."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autotuner.search.verdict import VERSION, Outcome, Verdict
from autotuner.vocabulary import Failure, Fit, Source

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("autotuner", "api", "core", "storage")
SUFFIXES = (".py", ".html", ".j2")
_KINDS = r"""["'](?:cpu|cuda|npu)["']"""
_CATEGORIES = "|".join(sorted({*Failure, *Fit}))
_SOURCES = "|".join(sorted(Source))
#: What reads a meaning from a string, and why it must not.
FORBIDDEN = {
    r"""startswith\(["']kept""": "a verdict's outcome read from its reason (Verdict.outcome)",
    r"""startswith\(["']BLOCK_""": "a config key's role read from its name (Tunable.role)",
    r"""["']kept_frozen["']""": "the version-1 verdict read by key (Verdict.of upgrades it)",
    rf"""(?:kind|backend)\s*(?:==|!=)\s*{_KINDS}|{_KINDS}\s*(?:==|!=)\s*\w*\.?(?:kind|backend)\b""": (
        "a backend kind compared with a string (core.socs.BackendKind)"
    ),
    rf"""\b(?:kind|backend)\s+(?:not\s+)?in\s+\(\s*{_KINDS}""": (
        "a backend kind compared with strings (core.socs.BackendKind)"
    ),
    rf"""category\s*(?:==|!=)\s*["'](?:{_CATEGORIES})["']""": (
        "a failure category compared with a string (autotuner.vocabulary.Failure)"
    ),
    rf"""["']category["']\s*:\s*["'](?:{_CATEGORIES})["']""": (
        "a failure category written as a string (autotuner.vocabulary.Failure)"
    ),
    rf"""source\s*(?:==|!=)\s*["'](?:{_SOURCES})["']|Choice\([^)]*,\s*["'](?:{_SOURCES})["']""": (
        "a proposal source as a string (autotuner.vocabulary.Source)"
    ),
    r"""(?:re\.\w+\(|\(\?P<).*nearest frozen case""": (
        "the launcher's warning parsed back (its NearestFrozenCase records the case)"
    ),
}


#: The one reader of the version-1 verdict (old rows and files must load).
VERSION_1_READER = ROOT / "autotuner" / "search" / "verdict.py"


def _files() -> list[Path]:
    return sorted(
        path
        for unit in SCANNED
        for path in (ROOT / unit).rglob("*")
        if path.suffix in SUFFIXES and "migrations" not in path.parts and path != VERSION_1_READER
    )


def test_no_meaning_is_read_from_a_string():
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, why in FORBIDDEN.items():
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {why}: {line.strip()}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        'if verdict.get("reason", "").startswith("kept"):',
        'kept = bool(verdict.get("kept_frozen"))',
        'constexprs = {k: v for k, v in config.items() if k.startswith("BLOCK_")}',
        'if backend.kind == "npu":',
        'if "cuda" != soc.kind:',
        'if category == "ub_overflow":',
        'attrs = {"category": "infeasible"}',
        'return Choice(config, "warm")',
        'if proposal.source == "default":',
        '_NEAREST = re.compile(r"^(?P<kernel>\\S+): no config frozen on .*nearest frozen case")',
        '    r"^(?P<kernel>\\S+): no config frozen on (?P<soc>\\S+) for .*nearest frozen case"',
    ],
)
def test_the_guard_sees_each_pattern(line):
    assert any(re.search(pattern, line) for pattern in FORBIDDEN)


def _verdict(**changes) -> Verdict:
    fields = {
        "outcome": Outcome.BEATS_DEFAULT,
        "method": "3 interleaved rounds",
        "complete_trials": 12,
        "retimed": (
            {
                "config": {"BLOCK": 16},
                "trial": 0,
                "median_ms": 1.0,
                "p20_ms": 0.9,
                "p80_ms": 1.1,
                "n": 60,
                "paired_ratio": 1.0,
            },
            {
                "config": {"BLOCK": 64},
                "trial": 5,
                "median_ms": 0.6,
                "p20_ms": 0.5,
                "p80_ms": 0.7,
                "n": 60,
                "paired_ratio": 0.6,
            },
        ),  # fmt: skip
        "default_config": {"BLOCK": 16},
        "winner": {"BLOCK": 64},
        "winner_trial": 5,
        "winner_median_ms": 0.6,
        "default_median_ms": 1.0,
        "speedup": 1 / 0.6,
        "p_value": 0.001,
        "beats_default": True,
    }
    return Verdict.model_validate({**fields, **changes})


def test_the_json_form_round_trips_with_its_version():
    verdict = _verdict(frozen_config={"BLOCK": 32}, frozen_gain=0.2, frozen_p_value=0.01,
                       outcome=Outcome.BEATS_FROZEN)  # fmt: skip
    stored = verdict.as_dict()
    assert stored["version"] == VERSION and stored["outcome"] == "beats_frozen"
    assert Verdict.of(stored) == verdict
    assert verdict.winner_ms == 0.6 and verdict.winner_retimed.trial == 5
    assert verdict.text.startswith("beats default; beats the frozen config by 20.0%")
    assert Verdict.of(None) is None


def _old(**changes) -> dict:
    """A verdict as `settle.retime` stored it before the version field (main e10c574)."""
    old = _verdict().as_dict()
    for key in ("version", "outcome", "frozen_config", "frozen_gain", "frozen_p_value"):
        del old[key]
    return {**old, **changes}


@pytest.mark.parametrize(
    ("stored", "outcome", "kept"),
    [
        (_old(), Outcome.BEATS_DEFAULT, False),
        (_old(beats_default=False, winner={"BLOCK": 16}), Outcome.DEFAULT_KEPT, False),
        (_old(reason="the default config failed"), Outcome.DEFAULT_FAILED, False),
        (_old(frozen_config={"BLOCK": 64}, kept_frozen=True), Outcome.FROZEN_WON, True),
        (_old(frozen_config={"BLOCK": 32}, kept_frozen=False), Outcome.BEATS_DEFAULT, False),
        (
            _old(frozen_config={"BLOCK": 32}, frozen_gain=0.3, frozen_p_value=0.001,
                 kept_frozen=False),
            Outcome.BEATS_FROZEN, False,
        ),
        (
            _old(frozen_config={"BLOCK": 64}, frozen_gain=0.001, frozen_p_value=0.4,
                 kept_frozen=True, reason="kept: within noise of the frozen config"),
            Outcome.FROZEN_KEPT, True,
        ),
    ],
)  # fmt: skip
def test_a_verdict_stored_before_the_version_loads(stored, outcome, kept):
    verdict = Verdict.of(stored)
    assert verdict.outcome is outcome and verdict.kept_frozen is kept
    assert verdict.version == VERSION and "reason" not in verdict.as_dict()
    assert verdict.winner == stored["winner"] and verdict.retimed[1].median_ms == 0.6


def test_an_old_retimed_entry_without_a_paired_ratio_loads():
    stored = _old()
    for entry in stored["retimed"]:
        del entry["paired_ratio"]
    assert Verdict.of(stored).retimed[0].paired_ratio is None


def _recorded_verdicts(value) -> list[dict]:
    """The verdicts (dicts with a method and a winning trial) anywhere in a JSON value."""
    if isinstance(value, dict):
        if "method" in value and "winner_trial" in value:
            return [value]
        return [v for item in value.values() for v in _recorded_verdicts(item)]
    if isinstance(value, list):
        return [v for item in value for v in _recorded_verdicts(item)]
    return []


def test_every_verdict_recorded_in_docs_runs_loads():
    """The search benchmarks' records hold the verdicts of their studies as stored then."""
    recorded = [
        verdict
        for path in sorted((ROOT / "docs" / "runs").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("{") and "winner_trial" in line
        for verdict in _recorded_verdicts(json.loads(line))
    ]
    outcomes = {Verdict.of(v).outcome for v in recorded}
    assert len(recorded) >= 50 and {Outcome.FROZEN_KEPT, Outcome.BEATS_FROZEN} <= outcomes


def test_a_boolean_tunable_stays_a_boolean():
    """A winner with SEQUENCE_PARALLEL False is frozen as False, not 0."""
    winner = {"BLOCK_M": 16, "SEQUENCE_PARALLEL": False, "compile_mode": "simt_only"}
    stored = _verdict(winner=winner).as_dict()
    assert stored["winner"]["SEQUENCE_PARALLEL"] is False
    assert Verdict.of(stored).winner["SEQUENCE_PARALLEL"] is False

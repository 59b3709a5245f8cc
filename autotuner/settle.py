"""The settlement of a study: its best few re-timed interleaved with the default, the verdict
stored by compare-and-set on the number of completed trials it was computed on."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import optuna
from sqlalchemy import or_, update

from ops.spec import Config
from storage import Database, StudyRecord
from storage.models import utcnow

from .backends import Timing
from .space import config_key
from .stats import faster_beyond_noise

#: The best few re-timed against the default before a winner is declared.
RETIME_CANDIDATES = 3


@dataclass(frozen=True)
class Rules:
    min_gain: float  # a winner must be at least this much faster than the default...
    alpha: float  # ...with a one-sided Mann-Whitney p-value under this
    rounds: int
    reps: int


def retime_candidates(
    complete: list[optuna.trial.FrozenTrial], default: Config
) -> list[optuna.trial.FrozenTrial]:
    """The fastest few trials other than the default's, to re-time against it (`complete` sorted
    by time). A trial whose compiler turned multibuffer off timed another config than its own;
    that config has a trial of its own, so it never wins as multibuffered."""
    return [
        t
        for t in complete
        if t.user_attrs["config"] != default and not t.user_attrs.get("multibuffer_fallback")
    ][:RETIME_CANDIDATES]


def retime(
    complete: list[optuna.trial.FrozenTrial],
    default: Config,
    samples_of: Callable[[Config, int], list[float]],
    rules: Rules,
) -> dict[str, Any]:
    """The verdict on `complete` (sorted fastest first): the best few re-timed interleaved with
    the default; the default stays unless beaten beyond noise."""
    default_trial = next((t for t in complete if t.user_attrs["config"] == default), None)
    candidates = retime_candidates(complete, default)
    configs = ([default] if default_trial else []) + [
        dict(t.user_attrs["config"]) for t in candidates
    ]
    samples: dict[str, list[float]] = {config_key(c): [] for c in configs}
    for _ in range(rules.rounds):  # interleaved: drift hits every config alike
        for config in configs:
            samples[config_key(config)] += samples_of(config, rules.reps)
    summary = [
        {"config": c, "trial": t.number, **Timing.of(samples[config_key(c)]).as_dict()}
        for c, t in zip(
            configs, ([default_trial] if default_trial else []) + candidates, strict=True
        )
        if samples[config_key(c)]
    ]
    verdict: dict[str, Any] = {
        "method": f"{rules.rounds} interleaved rounds of >= {rules.reps} timed calls; a winner must be >= {rules.min_gain:.0%} faster than the default with a one-sided Mann-Whitney p < {rules.alpha}",
        "complete_trials": len(complete),
        "retimed": summary,
        "default_config": default,
    }
    if default_trial is None or not samples[config_key(default)]:
        best = min(summary, key=lambda s: s["median_ms"])
        verdict.update(
            winner=best["config"],
            winner_trial=best["trial"],
            winner_median_ms=best["median_ms"],
            default_median_ms=None,
            speedup=None,
            p_value=None,
            beats_default=True,
            reason="the default config failed",
        )
        return verdict
    reference = samples[config_key(default)]
    default_ms = statistics.median(reference)
    challengers = [entry for entry in summary if entry["config"] != default]
    fastest = min(challengers, key=lambda entry: entry["median_ms"], default=None)
    beats, p_value = False, None
    if fastest is not None:
        candidate = samples[config_key(fastest["config"])]
        beats, _, p_value = faster_beyond_noise(candidate, reference, rules.min_gain, rules.alpha)
    winner = (
        fastest
        if beats
        else {"config": default, "trial": default_trial.number, "median_ms": default_ms}
    )
    verdict.update(
        winner=winner["config"],
        winner_trial=winner["trial"],
        winner_median_ms=winner["median_ms"],
        p_value=p_value,
        beats_default=beats,
    )
    verdict.update(default_median_ms=default_ms, speedup=default_ms / verdict["winner_median_ms"])
    return verdict


def store(db: Database, record_id: int, verdict: dict[str, Any], trials: int) -> StudyRecord:
    """Store `verdict` unless one on as many trials exists (compare-and-set): concurrent
    processes end on one verdict. Returns the record with the verdict it holds now."""
    with db.sessions() as session:
        newer = or_(StudyRecord.verdict_trials.is_(None), StudyRecord.verdict_trials < trials)
        session.execute(
            update(StudyRecord)
            .where(StudyRecord.id == record_id, newer)
            .values(verdict=verdict, verdict_at=utcnow(), verdict_trials=trials)
            .execution_options(synchronize_session=False)
        )
        session.commit()
        stored = session.get(StudyRecord, record_id)  # ours, or a verdict on as many trials
        assert stored is not None
        return stored

"""The settlement of a study: its best few re-timed interleaved with the default, the verdict
stored by compare-and-set on the number of completed trials it was computed on.

The finals are paired: each round times every finalist once, in an order rotated from round to
round (none always first), and a finalist is ranked by the median over rounds of its time over
the default's in the same round, so drift between rounds cancels (Helion's paired finals halved
its selection regret, helion/autotuner/benchmarking.py, 2026-09).

Freezes do not churn: where a config is frozen already for the study's (soc, kernel, case) and the
study measured it, it is re-timed beside the others, and a new winner replaces it only by the rule
a winner must pass against the default (at least `min_gain` faster, one-sided Mann-Whitney p under
`alpha`); else the verdict keeps it (`Outcome.FROZEN_KEPT`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import optuna
from sqlalchemy import or_, update

from ops.spec import Config
from storage import Database, StudyRecord
from storage.models import utcnow

from ..atk.store import FrozenStore
from ..backends import Timing
from ..measure.stats import faster_beyond_noise
from ..settings import STANDARD
from .space import config_key
from .verdict import Outcome, Retimed, Verdict


@dataclass(frozen=True)
class Rules:
    min_gain: float  # a winner must be at least this much faster than the default...
    alpha: float  # ...with a one-sided Mann-Whitney p-value under this
    rounds: int
    reps: int
    finals: int = STANDARD.finals  # the best few re-timed against the default


def retime_candidates(
    complete: list[optuna.trial.FrozenTrial], default: Config, finals: int = STANDARD.finals
) -> list[optuna.trial.FrozenTrial]:
    """The fastest `finals` trials other than the default's, to re-time against it (`complete`
    sorted by time). A trial whose compiler turned multibuffer off timed another config than its
    own; that config has a trial of its own, so it never wins as multibuffered."""
    return [
        t
        for t in complete
        if t.user_attrs["config"] != default and not t.user_attrs.get("multibuffer_fallback")
    ][:finals]


def frozen_config(op: str, soc: str, kernel: str, case: str) -> Config | None:
    """The config frozen for (soc, kernel, case), if any (`FrozenStore`)."""
    return FrozenStore.read(op).config(soc, kernel, case)


def paired_rounds(
    configs: list[Config], samples_of: Callable[[Config, int], list[float]], rules: Rules
) -> tuple[dict[str, list[float]], list[dict[str, float]]]:
    """(config key -> every sample, per round: config key -> the round's median) of `configs`
    timed interleaved in `rules.rounds` rounds, round r starting at the r-th config."""
    samples: dict[str, list[float]] = {config_key(c): [] for c in configs}
    rounds = []
    for r in range(rules.rounds):  # interleaved: drift hits every config alike
        medians = {}
        for config in configs[r % len(configs) :] + configs[: r % len(configs)]:
            got = samples_of(config, rules.reps)
            samples[config_key(config)] += got
            if got:
                medians[config_key(config)] = statistics.median(got)
        rounds.append(medians)
    return samples, rounds


def paired_ratios(rounds: list[dict[str, float]], reference: str) -> dict[str, float]:
    """Config key -> the median over rounds of its median over `reference`'s in that round
    (rounds where both ran)."""
    ratios: dict[str, list[float]] = {}
    for medians in rounds:
        if reference in medians:
            for key, ms in medians.items():
                ratios.setdefault(key, []).append(ms / medians[reference])
    return {key: statistics.median(values) for key, values in ratios.items()}


def retime(
    complete: list[optuna.trial.FrozenTrial],
    default: Config,
    samples_of: Callable[[Config, int], list[float]],
    rules: Rules,
    frozen: Config | None = None,
) -> Verdict:
    """The verdict on `complete` (sorted fastest first): the best few re-timed interleaved with
    the default (and with the `frozen` config, where the study measured it); the default stays
    unless beaten beyond noise, and so does the frozen config."""
    default_trial = next((t for t in complete if t.user_attrs["config"] == default), None)
    candidates = retime_candidates(complete, default, rules.finals)
    frozen_trial = next((t for t in complete if t.user_attrs["config"] == frozen), None)
    if frozen_trial is not None and frozen != default and frozen_trial not in candidates:
        candidates.append(frozen_trial)
    configs = ([default] if default_trial else []) + [
        dict(t.user_attrs["config"]) for t in candidates
    ]
    samples, rounds = paired_rounds(configs, samples_of, rules)
    ratios = paired_ratios(rounds, config_key(configs[0]))
    summary = [
        Retimed(
            config=c,
            trial=t.number,
            **Timing.of(samples[config_key(c)]).as_dict(),
            paired_ratio=ratios.get(config_key(c)),
        )
        for c, t in zip(
            configs, ([default_trial] if default_trial else []) + candidates, strict=True
        )
        if samples[config_key(c)]
    ]
    common: dict[str, Any] = {
        "method": f"{rules.rounds} interleaved rounds of >= {rules.reps} timed calls, the order rotated each round, finalists ranked by their median time over the default's of the same round; a winner must be >= {100 * rules.min_gain:g}% faster than the default with a one-sided Mann-Whitney p < {rules.alpha}",
        "complete_trials": len(complete),
        "retimed": tuple(summary),
        "default_config": default,
    }
    if default_trial is None or not samples[config_key(default)]:
        best = min(summary, key=lambda s: s.median_ms)
        return Verdict(
            **common,
            outcome=Outcome.DEFAULT_FAILED,
            winner=best.config,
            winner_trial=best.trial,
            winner_median_ms=best.median_ms,
            default_median_ms=None,
            speedup=None,
            p_value=None,
            beats_default=True,
        )
    reference = samples[config_key(default)]
    default_ms = statistics.median(reference)
    challengers = [entry for entry in summary if entry.config != default]
    fastest = min(
        challengers,
        key=lambda entry: (entry.paired_ratio or math.inf, entry.median_ms),
        default=None,
    )
    beats, p_value = False, None
    if fastest is not None:
        candidate = samples[config_key(fastest.config)]
        beats, _, p_value = faster_beyond_noise(candidate, reference, rules.min_gain, rules.alpha)
    winner = fastest if beats and fastest else Retimed(
        config=default, trial=default_trial.number, median_ms=default_ms
    )  # fmt: skip
    verdict: dict[str, Any] = {
        **common,
        "outcome": Outcome.BEATS_DEFAULT if beats else Outcome.DEFAULT_KEPT,
        "winner": winner.config,
        "winner_trial": winner.trial,
        "winner_median_ms": winner.median_ms,
        "p_value": p_value,
        "beats_default": beats,
    }
    if frozen_trial is not None:
        verdict.update(_keep_frozen(verdict, frozen_trial, samples, summary, rules))
    return Verdict(
        **verdict, default_median_ms=default_ms, speedup=default_ms / verdict["winner_median_ms"]
    )


def _keep_frozen(
    verdict: dict[str, Any],
    frozen_trial: optuna.trial.FrozenTrial,
    samples: dict[str, list[float]],
    summary: list[Retimed],
    rules: Rules,
) -> dict[str, Any]:
    """What changes in `verdict` where a config is frozen already: it stays unless the winner
    beats it beyond noise (an interleaved A/B)."""
    frozen = dict(frozen_trial.user_attrs["config"])
    if verdict["winner"] == frozen:
        return {"frozen_config": frozen, "outcome": Outcome.FROZEN_WON}
    if not samples[config_key(frozen)]:
        return {"frozen_config": frozen}
    beats, gain, p_value = faster_beyond_noise(
        samples[config_key(verdict["winner"])], samples[config_key(frozen)], rules.min_gain,
        rules.alpha,
    )  # fmt: skip
    changes = {"frozen_config": frozen, "frozen_gain": gain, "frozen_p_value": p_value}
    if beats:
        return {**changes, "outcome": Outcome.BEATS_FROZEN}
    kept = next(entry for entry in summary if entry.config == frozen)
    over_default = faster_beyond_noise(
        samples[config_key(frozen)], samples[config_key(verdict["default_config"])],
        rules.min_gain, rules.alpha,
    )  # fmt: skip
    return {
        **changes,
        "outcome": Outcome.FROZEN_KEPT,
        "winner": frozen,
        "winner_trial": kept.trial,
        "winner_median_ms": kept.median_ms,
        "beats_default": over_default[0],
        "p_value": over_default[2],
    }


def store(db: Database, record_id: int, verdict: Verdict, trials: int) -> StudyRecord:
    """Store `verdict` unless one on as many trials exists (compare-and-set): concurrent
    processes end on one verdict. Returns the record with the verdict it holds now."""
    with db.sessions() as session:
        newer = or_(StudyRecord.verdict_trials.is_(None), StudyRecord.verdict_trials < trials)
        session.execute(
            update(StudyRecord)
            .where(StudyRecord.id == record_id, newer)
            .values(verdict=verdict.as_dict(), verdict_at=utcnow(), verdict_trials=trials)
            .execution_options(synchronize_session=False)
        )
        session.commit()
        stored = session.get(StudyRecord, record_id)  # ours, or a verdict on as many trials
        assert stored is not None
        return stored

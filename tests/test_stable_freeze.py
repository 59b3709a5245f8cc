"""A config frozen already stays unless a new winner beats it beyond noise in an interleaved A/B."""

import random

import optuna
from optuna.trial import TrialState, create_trial

from autotuner.atk.generated_block import read_frozen
from autotuner.freeze.freeze import freeze
from autotuner.report.studies import summarize
from autotuner.search import settle
from autotuner.search.verdict import Outcome, Verdict
from core.paths import port_file
from ops import get_op
from storage import open_database

from .test_search import COPY_OP, tune

RULES = settle.Rules(min_gain=0.01, alpha=0.01, rounds=5, reps=20)
DEFAULT, FROZEN, NEW = ({"BLOCK": b} for b in (16, 32, 64))


def trials(*configs_and_times):
    return [
        create_trial(
            value=ms,
            state=TrialState.COMPLETE,
            user_attrs={"config": config},
            params={},
            distributions={},
        )  # fmt: skip
        for config, ms in configs_and_times
    ]


def fake_timer(medians):
    """Samples around each config's median, with a little noise."""
    rng = random.Random(3)

    def samples_of(config, reps):
        return [medians[config["BLOCK"]] * (1 + rng.uniform(-0.002, 0.002)) for _ in range(reps)]

    return samples_of


def numbered(complete):
    for number, trial in enumerate(complete):
        trial.number = number
    return complete


def test_a_winner_within_noise_of_the_frozen_config_leaves_it_frozen():
    complete = numbered(trials((NEW, 0.700), (FROZEN, 0.701), (DEFAULT, 1.0)))
    timer = fake_timer({16: 1.0, 32: 0.7015, 64: 0.7000})  # 0.2% apart: noise
    verdict = settle.retime(complete, DEFAULT, timer, RULES, FROZEN)
    assert verdict.winner == FROZEN and verdict.outcome is Outcome.FROZEN_KEPT
    assert verdict.text == "kept: within noise of the frozen config"
    assert verdict.beats_default is True and verdict.frozen_p_value is not None


def test_a_winner_beyond_noise_replaces_the_frozen_config():
    complete = numbered(trials((NEW, 0.6), (FROZEN, 0.7), (DEFAULT, 1.0)))
    verdict = settle.retime(
        complete, DEFAULT, fake_timer({16: 1.0, 32: 0.7, 64: 0.6}), RULES, FROZEN
    )
    assert verdict.winner == NEW and verdict.outcome is Outcome.BEATS_FROZEN
    assert verdict.frozen_gain > 0.1 and verdict.frozen_p_value < 0.01


def test_the_frozen_config_is_re_timed_even_outside_the_best_few():
    complete = numbered(
        trials(
            *(({"BLOCK": b}, 0.5 + b / 1000) for b in (1, 2, 4, 8)), (FROZEN, 0.6), (DEFAULT, 1.0)
        )
    )
    medians = {1: 0.599, 2: 0.6, 4: 0.601, 8: 0.602, 16: 1.0, 32: 0.6}
    verdict = settle.retime(complete, DEFAULT, fake_timer(medians), RULES, FROZEN)
    assert FROZEN in [r.config for r in verdict.retimed]
    assert verdict.winner == FROZEN and verdict.kept_frozen


def test_no_frozen_config_or_an_unmeasured_one_changes_nothing():
    complete = numbered(trials((NEW, 0.6), (DEFAULT, 1.0)))
    timer = fake_timer({16: 1.0, 64: 0.6})
    for frozen in (None, FROZEN):
        verdict = settle.retime(complete, DEFAULT, timer, RULES, frozen)
        assert verdict.winner == NEW and verdict.outcome is Outcome.BEATS_DEFAULT


def test_a_rerun_measures_the_frozen_config_and_freeze_and_status_report_the_rule(tree, tmp_path):
    """End to end on the interpreter: after a freeze, a new study of the case measures the frozen
    config (its first warm start) and re-times its best against it; freeze and status say when
    the frozen config stays."""
    spec = get_op(COPY_OP)
    first = f"sqlite:///{tmp_path / 'first.db'}"
    tune(first, trials=4)
    freeze(open_database(first), spec, "cpu", label=None, dry_run=False, force=True)
    path = port_file(COPY_OP)
    (pinned,) = [e["config"] for e in read_frozen(path.read_text(), path)["cpu"]["fwd"]]
    again = f"sqlite:///{tmp_path / 'again.db'}"
    (record,) = tune(again, trials=4)
    verdict = Verdict.of(record.verdict)
    assert verdict.frozen_config == pinned
    study = optuna.load_study(study_name=record.name, storage=again)
    measured = [
        t.user_attrs["config"] for t in study.get_trials() if t.state == TrialState.COMPLETE
    ]
    assert pinned in measured[:2]  # right after the default (unless it is the default)
    kept = verdict.outcome is Outcome.FROZEN_KEPT
    assert not kept or verdict.winner == pinned
    result = freeze(open_database(again), spec, "cpu", label=None, dry_run=True, force=True)
    assert [e.kept for e in result.entries] == [kept]
    (summary,) = summarize(open_database(again), op=COPY_OP)
    assert summary.verdict == verdict


def test_the_run_summary_gives_the_a_b_gain_of_a_new_winner_over_the_frozen_config():
    from types import SimpleNamespace

    from rich.console import Console

    from autotune.cli.search import _summary_table

    complete = numbered(trials((NEW, 0.6), (FROZEN, 0.7), (DEFAULT, 1.0)))
    verdict = settle.retime(
        complete, DEFAULT, fake_timer({16: 1.0, 32: 0.7, 64: 0.6}), RULES, FROZEN
    )
    summary = SimpleNamespace(
        kernel="fwd", case="c", soc="H200", strategy="local", failures={}, complete=3,
        infeasible=0, budget=3, default_ms=1.0, best_ms=0.6, verdict=verdict, stale=False,
    )  # fmt: skip
    console = Console(width=400, record=True)
    console.print(_summary_table([summary], "t"))
    text = console.export_text()
    gain = f"{verdict.frozen_gain:.1%}"
    assert f"beats default; beats the frozen config by {gain} (p=" in text


def test_the_finals_are_paired_rounds_in_an_order_rotated_each_round():
    order = []

    def samples_of(config, reps):
        order.append(config["BLOCK"])
        drift = (1.0, 3.0, 0.5)[(len(order) - 1) // 3]  # the machine slows and speeds up by round
        return [config["BLOCK"] * drift] * reps

    rules = settle.Rules(min_gain=0.01, alpha=0.01, rounds=3, reps=2)
    samples, rounds = settle.paired_rounds([DEFAULT, FROZEN, NEW], samples_of, rules)
    assert order == [16, 32, 64, 32, 64, 16, 64, 16, 32]
    assert all(len(s) == 6 for s in samples.values())
    ratios = settle.paired_ratios(rounds, '{"BLOCK":16}')
    assert ratios == {'{"BLOCK":16}': 1.0, '{"BLOCK":32}': 2.0, '{"BLOCK":64}': 4.0}


def test_the_winner_is_the_finalist_fastest_beside_the_default_in_the_same_rounds():
    complete = numbered(trials((NEW, 0.9), (FROZEN, 0.95), (DEFAULT, 1.0)))
    medians = {16: 1.0, 32: 0.97, 64: 0.9}
    verdict = settle.retime(complete, DEFAULT, fake_timer(medians), RULES)
    assert verdict.winner == NEW and verdict.beats_default
    ratios = {r.config["BLOCK"]: r.paired_ratio for r in verdict.retimed}
    assert ratios[16] == 1.0 and 0.89 < ratios[64] < 0.91 and 0.96 < ratios[32] < 0.98

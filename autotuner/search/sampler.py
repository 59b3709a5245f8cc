"""The search policy as an Optuna sampler, over a kernel's tunables as log2-ordinal axes.

`local` (the default strategy): the upstream default first; then the warm starts (winners of
sibling studies); then a local search around the best config so far: its unmeasured neighbours
one ordinal step away, then pattern moves (two measured steps at once, tiles and stages trade
against each other); once that has converged, a global step by a model sampler (TPE) from which
the local search restarts. `tpe`, `gp` and `random` take the default and then only the model's
steps; `exhaustive` every feasible config, nearest the default first.
The last trials of the budget (`polish_trials`: as many as a config has neighbours, at most a
quarter of the budget; none for `exhaustive`) go to a polish (`polish`): the open neighbours one
ordinal step from the best config so far, and from a neighbour that beats it its own; where
none is open, the policy above goes on (after the polish of pytorch/helion's autotuner, 2026-09).

It never proposes a config that is taken (claimed, measured or statically rejected): `taken`
says which are, the claim board's keys in a study, the study's own trials otherwise. So a study
holds exactly the configs that were measured, and no pseudo-trials. A caller that must claim a
config before its trial exists (several processes on one study) asks `propose`, claims the
config, `pin`s it and then calls `study.ask`, whose trial gets the pinned config.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState, create_trial

from ops.spec import Config

from ..vocabulary import Source
from .space import SearchSpace, config_key

STRATEGIES = ("local", "tpe", "gp", "random", "exhaustive")
#: Draws of the model sampler per global step before the open config nearest its last draw is
#: taken instead (its draws may be configs measured already).
MODEL_DRAWS = 8
#: Completed trials before the model sampler's proposals replace random ones.
MODEL_STARTUP_TRIALS = 4


@dataclass(frozen=True)
class Choice:
    config: Config
    source: Source


def polish_trials(space: SearchSpace, strategy: str, budget: int) -> int:
    """The last trials of the budget that go to the polish first: as many as one config has
    neighbours at most, no more than a quarter of the budget; none for `exhaustive`."""
    return 0 if strategy == "exhaustive" else min(space.most_neighbors, budget // 4)


def _model_sampler(strategy: str, seed: int) -> BaseSampler:
    if strategy == "gp":
        return optuna.samplers.GPSampler(
            seed=seed, n_startup_trials=MODEL_STARTUP_TRIALS, deterministic_objective=True
        )
    if strategy == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(
        seed=seed,
        multivariate=True,
        constant_liar=True,
        n_startup_trials=MODEL_STARTUP_TRIALS,
    )


class SearchSampler(BaseSampler):
    """Proposes the configs of one study (see the module docstring)."""

    def __init__(
        self,
        space: SearchSpace,
        feasible: Sequence[Config],
        default: Config,
        *,
        strategy: str = "local",
        warm_starts: Sequence[Config] = (),
        seed: int = 0,
        taken: Callable[[Study], set[str]] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
        self.space, self.default, self.strategy = space, default, strategy
        self.feasible = list(feasible)
        self.feasible_keys = {config_key(c) for c in self.feasible}
        self.warm_starts = [
            c for c in warm_starts if config_key(c) in self.feasible_keys and c != default
        ]
        self.distributions = space.distributions()
        self._taken = taken or self._trial_configs
        self._model = _model_sampler(strategy, seed)
        self._pinned: Choice | None = None

    # -- Optuna's sampler interface ------------------------------------------------------------
    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self.distributions

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if self._pinned is not None:  # its caller records the config and its source
            choice, self._pinned = self._pinned, None
            return self.space.to_params(choice.config)
        proposed = self.propose(study)
        if proposed is None:
            return {}  # nothing open: the parameters fall to sample_independent
        study._storage.set_trial_user_attr(trial._trial_id, "config", proposed.config)
        study._storage.set_trial_user_attr(trial._trial_id, "source", proposed.source)
        return self.space.to_params(proposed.config)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        raise RuntimeError(f"{param_name}: every feasible config of the study is taken")

    def reseed_rng(self) -> None:
        self._model.reseed_rng()

    # -- the policy ------------------------------------------------------------------------------
    def pin(self, choice: Choice | None) -> None:
        """The config the next trial asked of this sampler gets (one claimed already); the
        caller records it on the trial."""
        self._pinned = choice

    def _trial_configs(self, study: Study) -> set[str]:
        """Configs of the study's trials, in any state: taken where no claim board is."""
        names = set(self.distributions)
        return {
            config_key(self.space.from_params(t.params))
            for t in study.get_trials(deepcopy=False)
            if names <= t.params.keys()
        }

    def propose(self, study: Study) -> Choice | None:
        """The next config to measure; None when every feasible config is taken."""
        taken = self._taken(study)
        open_configs = [c for c in self.feasible if config_key(c) not in taken]
        if not open_configs:
            return None
        if config_key(self.default) not in taken:
            return Choice(self.default, Source.DEFAULT)
        if self.strategy == "exhaustive":
            return Choice(
                self.space.nearest(self.default, open_configs) or open_configs[0],
                Source.EXHAUSTIVE,
            )
        history = self._history(study)
        if self.strategy == "local":
            for config in self.warm_starts:
                if config_key(config) not in taken:
                    return Choice(config, Source.WARM)
            local = self._local_move(history, taken)
            if local is not None:
                return local
        return Choice(self._global_step(history, taken, open_configs), Source.GLOBAL)

    def polish(self, study: Study) -> Choice | None:
        """An open feasible neighbour of the best config measured so far; None when it has none
        (or nothing is measured)."""
        history = [(c, v) for c, v, _ in self._history(study) if v is not None]
        if not history:
            return None
        best = min(history, key=lambda cv: cv[1])[0]
        open_keys = self.feasible_keys - self._taken(study)
        return next(
            (
                Choice(c, Source.POLISH)
                for c in self.space.neighbors(best)
                if config_key(c) in open_keys
            ),
            None,
        )

    def _history(self, study: Study) -> list[tuple[Config, float | None, str]]:
        """(config, median ms or None, source) of the study's finished trials, in order."""
        names = set(self.distributions)
        out = []
        for t in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
            if t.state.is_finished() and names <= t.params.keys():
                value = t.value if t.state == TrialState.COMPLETE else None
                out.append(
                    (self.space.from_params(t.params), value, t.user_attrs.get("source", ""))
                )
        return out

    def _local_move(
        self, history: list[tuple[Config, float | None, str]], taken: set[str]
    ) -> Choice | None:
        """An open neighbour or pattern move of the best config so far, else of the best config
        since the last global step (the restarted local search)."""
        measured = {config_key(c): (c, v) for c, v, _ in history if v is not None}
        since = max((i for i, (_, _, s) in enumerate(history) if s == Source.GLOBAL), default=None)
        centers = [
            min(((c, v) for c, v, _ in entries if v is not None), key=lambda cv: cv[1])[0]
            for entries in (history, history[since:] if since is not None else [])
            if any(v is not None for _, v, _ in entries)
        ] or [self.default]
        for center in centers:
            for config in self.space.neighbors(center):
                if config_key(config) in self.feasible_keys - taken:
                    return Choice(config, Source.LOCAL)
            for config in self.space.pattern_moves(center, measured):
                if config_key(config) in self.feasible_keys - taken:
                    return Choice(config, Source.PATTERN)
        return None

    def _global_step(
        self,
        history: list[tuple[Config, float | None, str]],
        taken: set[str],
        open_configs: list[Config],
    ) -> Config:
        """The model sampler's proposal, redrawn while it is taken; else the open config nearest
        its last draw.

        The model runs on an in-memory copy of the history (measured configs complete, failed
        ones and those in flight running, which TPE's constant liar steers away from): it may
        then draw before the study's trial exists, and writes nothing into the study."""
        shadow = optuna.create_study(sampler=self._model, direction="minimize")
        seen = set()
        for config, value, _ in history:
            seen.add(config_key(config))
            shadow.add_trial(
                create_trial(
                    params=self.space.to_params(config),
                    distributions=self.distributions,
                    value=value,
                    state=TrialState.COMPLETE if value is not None else TrialState.RUNNING,
                )
            )
        for key in (taken & self.feasible_keys) - seen:  # in flight in other processes
            shadow.add_trial(
                create_trial(
                    params=self.space.to_params(json.loads(key)),
                    distributions=self.distributions,
                    state=TrialState.RUNNING,
                )
            )
        draw: Config | None = None
        for _ in range(MODEL_DRAWS):
            params = shadow.ask(self.distributions).params
            draw = self.space.from_params(params)
            if config_key(draw) not in taken and config_key(draw) in self.feasible_keys:
                return draw
        assert draw is not None
        return self.space.nearest(draw, open_configs) or open_configs[0]

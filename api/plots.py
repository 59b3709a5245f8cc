"""Per-study plotly charts (optimization history, parameter importances) as HTML fragments."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import optuna
from optuna.storages import RDBStorage
from optuna.trial import TrialState
from optuna.visualization import plot_optimization_history, plot_param_importances
from plotly.graph_objects import Figure

#: Height of every chart (its div is otherwise as tall as its container).
HEIGHT = "380px"
#: Optuna loads a study trial by trial: bigger studies are listed by the API, not charted.
MAX_CHARTED_TRIALS = 2000


@dataclass
class StudyPlots:
    history: str | None
    importances: str | None
    note: str | None  # why a chart is missing


def _html(figure: Figure) -> str:
    """A fragment for a page that loads plotly.min.js itself."""
    return figure.to_html(full_html=False, include_plotlyjs=False, default_height=HEIGHT)


def study_plots(storage: RDBStorage, name: str, trials: int, interpreter: bool) -> StudyPlots:
    """The charts of one study of `trials` trials; on an interpreter soc labelled as such."""
    if trials > MAX_CHARTED_TRIALS:
        return StudyPlots(None, None, f"{trials} trials: too many to chart here")
    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        return StudyPlots(None, None, f"no Optuna study named {name}")
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        return StudyPlots(None, None, "no completed trials yet")
    target = "interpreter time, ms (not a performance number)" if interpreter else "median ms"
    history = _html(plot_optimization_history(study, target_name=target))
    if len(complete) < 2:
        return StudyPlots(history, None, "parameter importances need 2 or more completed trials")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importances = _html(plot_param_importances(study))
    except Exception as exc:  # degenerate studies (e.g. one config only) make the evaluators raise
        return StudyPlots(history, None, f"parameter importances unavailable: {exc}")
    return StudyPlots(history, importances, None)

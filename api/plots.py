"""Plotly charts as HTML fragments: per study its optimization history, parameter importances and
the parallel coordinates of its trials; for the overview, per op its speedup over the default and
its ratio to the GPU."""

from __future__ import annotations

import math
import statistics
import warnings
from collections import defaultdict
from dataclasses import dataclass

import optuna
from optuna.storages import RDBStorage
from optuna.trial import TrialState
from optuna.visualization import plot_optimization_history, plot_param_importances
from plotly.graph_objects import Bar, Figure, Parcoords

from .schemas import CaseOut, TrialOut

#: Height of every chart (its div is otherwise as tall as its container).
HEIGHT = "380px"
#: Optuna loads a study trial by trial: bigger studies are listed by the API, not charted.
MAX_CHARTED_TRIALS = 2000
#: Fewer completed trials than this give importances that say more about the draw than the kernel.
MIN_IMPORTANCE_TRIALS = 10
#: How the search names a power-of-two tunable's axis (`autotuner.search.space.param_name`).
LOG2_PREFIX = "log2_"


@dataclass
class StudyPlots:
    history: str | None
    importances: str | None
    note: str | None  # why a chart is missing, or the caveat of the importances


def _html(figure: Figure, div_id: str | None = None, height: str = HEIGHT) -> str:
    """A fragment for a page that loads plotly.min.js itself."""
    return figure.to_html(
        full_html=False, include_plotlyjs=False, default_height=height, div_id=div_id
    )


#: Ticks of a log axis of ratios, as people read them (1-2-5 in each decade).
LOG_TICKS = tuple(m * 10.0**e for e in range(-3, 4) for m in (1, 2, 5))


def log_ticks(values: list[float]) -> tuple[list[float], list[str]]:
    """The 1-2-5 ticks spanning `values` (positive), and their labels (0.1, 0.2, 0.5, 1, 2, 5)."""
    low, high = min(values), max(values)
    below = [t for t in LOG_TICKS if t <= low] or [LOG_TICKS[0]]
    above = [t for t in LOG_TICKS if t >= high] or [LOG_TICKS[-1]]
    ticks = [t for t in LOG_TICKS if below[-1] <= t <= above[0]]
    return ticks, [f"{t:g}" for t in ticks]


def _geomean(values: list[float]) -> float | None:
    return statistics.geometric_mean(values) if values else None


def overview_chart(rows: list[CaseOut]) -> str | None:
    """Per op and device soc, over its parts and cases: the geometric mean of the frozen speedup
    over the default and of frozen / GPU baseline (interpreter rows left out); None if no row
    has either."""
    speedups: dict[str, list[float]] = defaultdict(list)
    ratios: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.interpreter:
            continue
        label = f"{row.op} ({row.soc})"
        if row.speedup_over_default:
            speedups[label].append(row.speedup_over_default)
        if row.ratio_to_gpu:
            ratios[label].append(row.ratio_to_gpu)
    labels = sorted({*speedups, *ratios})
    if not labels:
        return None
    bars = {
        "speedup over the default (higher is better)": [_geomean(speedups[k]) for k in labels],
        "frozen / GPU baseline (below 1: faster than the GPU)": [_geomean(ratios[k]) for k in labels],
    }  # fmt: skip
    # One row per op, its name written out horizontally: a long name takes the margin, not the
    # room of its neighbours' labels or of the legend.
    figure = Figure([Bar(name=name, y=labels, x=x, orientation="h") for name, x in bars.items()])
    figure.add_vline(x=1.0, line_dash="dot", line_color="#888")
    tickvals, ticktext = log_ticks([v for x in bars.values() for v in x if v] + [1.0])
    height = 120 + 26 * len(labels)
    figure.update_layout(
        barmode="group",
        title="Per op: geometric means over its cases and parts",
        xaxis={"title": "x (log scale)", "type": "log", "tickvals": tickvals, "ticktext": ticktext},
        yaxis={"autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 70, "b": 40},
        height=height,
    )
    return _html(figure, div_id="overview-chart", height=f"{height}px")


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
    if len(complete) < MIN_IMPORTANCE_TRIALS:
        return StudyPlots(
            history,
            None,
            f"parameter importances need {MIN_IMPORTANCE_TRIALS} or more completed trials; "
            f"this study has {len(complete)}",
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            figure = plot_param_importances(study)
    except Exception as exc:  # degenerate studies (e.g. one config only) make the evaluators raise
        return StudyPlots(history, None, f"parameter importances unavailable: {exc}")
    for trace in figure.data:  # the tunables by their own names (the axes are their log2)
        trace.y = [str(name).removeprefix(LOG2_PREFIX) for name in trace.y]
    caveat = (
        f"Importances (Optuna fANOVA) from {len(complete)} completed trials: which tunable the "
        "time varied with over the configs tried, a rough guide, not a measurement."
    )
    return StudyPlots(history, _html(figure), caveat)


def parallel_coordinates(trials: list[TrialOut], interpreter: bool) -> str | None:
    """The completed trials as lines across the axes of their tunables, coloured by time (log2
    axes for powers of two, named as the configs name them); None with fewer than two."""
    complete = [t for t in trials if t.state == "COMPLETE" and t.value and t.config]
    if len(complete) < 2:
        return None
    names = list(dict.fromkeys(name for t in complete for name in t.config))
    axes = []
    for name in names:
        values = [t.config.get(name) for t in complete]
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        if not numeric:  # a switch or a mode: its values as positions
            labels = sorted({str(v) for v in values})
            axes.append({"label": name, "values": [labels.index(str(v)) for v in values],
                         "tickvals": list(range(len(labels))), "ticktext": labels})  # fmt: skip
            continue
        ticks = sorted(set(values))
        power = all(v > 0 and math.log2(v).is_integer() for v in ticks)
        axes.append({
            "label": name,
            "values": [math.log2(v) for v in values] if power else values,
            "tickvals": [math.log2(v) for v in ticks] if power else ticks,
            "ticktext": [str(v) for v in ticks],
        })  # fmt: skip
    times = [t.value for t in complete]
    target = "interpreter ms (not performance)" if interpreter else "median ms"
    axes.append({"label": target, "values": times})
    figure = Figure(
        Parcoords(
            line={
                "color": [math.log10(v) for v in times],
                "colorscale": "Viridis_r",
                "showscale": True,
                "colorbar": {"title": "log10 ms"},
            },
            dimensions=axes,
        )  # fmt: skip
    )
    figure.update_layout(title=f"{len(complete)} completed trials", margin={"l": 60, "r": 40})
    return _html(figure, div_id="parallel-coordinates")

import math

import pytest
import torch

from autotuner.measure.accuracy import judge, measure, ratio


def test_metrics_by_hand():
    golden = torch.tensor([1.0, -2.0, 4.0, 1e-9], dtype=torch.float64)  # last one: small domain
    actual = torch.tensor([1.001, -2.0, 3.996, 2e-9])
    e = measure(actual, golden, "float32")
    rel = [
        abs(float(torch.tensor(1.001)) - 1.0) / (1 + 1e-7),
        0.0,
        abs(float(torch.tensor(3.996)) - 4.0) / (4 + 1e-7),
    ]
    assert e.mare == pytest.approx(max(rel))
    assert e.mere == pytest.approx(sum(rel) / 3)
    diffs = [(float(a) - float(g)) ** 2 for a, g in zip(actual.double(), golden, strict=True)]
    assert e.rmse == pytest.approx(math.sqrt(sum(diffs) / 4))
    # The small-domain element is off by 1e-9, over fp32's small-value error 2^-30 (9.3e-10).
    assert (e.small_total, e.small_errors, e.finite) == (1, 1, True)
    assert (
        measure(
            torch.tensor([float("nan")]), torch.tensor([1.0], dtype=torch.float64), "float32"
        ).finite
        is False
    )


def test_ratio_rules():
    assert ratio(0.0, 0.0) == 1.0
    assert ratio(1.0, 0.0) == math.inf
    assert ratio(3.0, 1.5) == 2.0


def test_judge_modes():
    golden = torch.linspace(1, 2, 1000, dtype=torch.float64)
    good = measure(golden * (1 + 1e-5), golden, "float32")
    worse = measure(golden * (1 + 5e-5), golden, "float32")
    bad = measure(golden * (1 + 1e-2), golden, "float32")
    assert (
        judge(good, good, "float32", "L0").mode == "dual"
        and judge(good, good, "float32", "L0").passed
    )
    fallback = judge(worse, good, "float32", "L0")  # ratio 5 > 2, but within the fp32 threshold
    assert fallback.passed and fallback.mode == "golden" and "MERE ratio" in fallback.reason
    failed = judge(bad, good, "float32", "L0")
    assert not failed.passed and "MERE" in failed.reason
    assert judge(good, None, "float32", "L0").mode == "single"

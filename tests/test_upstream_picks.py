"""Upstream's `triton.autotune` pick held still: recorded once, launched again at it with the
autotune bypassed, and a changed pick said. A real Autotuner in the interpreter: Triton's own
benchmarker needs a GPU driver, so the kernel's `do_bench` (triton.autotune's argument) is a
cost table read off what the config wrote."""

import types
from datetime import UTC, datetime

import pytest
import torch
import triton
import triton.language as tl

from autotuner.baseline import upstream_picks
from autotuner.baseline.check import _hold_upstream_still
from storage import Baseline

N = 64
#: Time each BLOCK costs in the fake benchmark; tests change it to move the autotune's pick.
COST = {16: 1.0, 32: 2.0}
BENCHED: list[int] = []
OUT = torch.empty(N)


def _bench(kernel_call, quantiles):
    kernel_call()
    block = int(OUT[0])  # the kernel writes its BLOCK
    BENCHED.append(block)
    return [COST[block]] * len(quantiles)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 16}, num_warps=2), triton.Config({"BLOCK": 32}, num_warps=4)],
    key=["n"],
    do_bench=_bench,
)
@triton.jit
def _fill_block(out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, tl.full((BLOCK,), BLOCK, tl.float32), mask=offsets < n)


def _launch():
    _fill_block[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](OUT, N)


UPSTREAM = types.ModuleType("fake_upstream")
UPSTREAM._fill_block = _fill_block
UPSTREAM.helper = len  # not an Autotuner: passed over
SPEC = types.SimpleNamespace(
    upstream=types.SimpleNamespace(load=lambda: UPSTREAM), upstream_module=lambda: UPSTREAM
)
PICK_16 = {"_fill_block": {"BLOCK": 16, "num_warps": 2, "num_ctas": 1, "num_stages": 3}}


@pytest.fixture(autouse=True)
def fresh_autotuner():
    """Each test starts in a fresh process's state: nothing tuned yet, costs as above."""
    _fill_block.cache.clear()
    BENCHED.clear()
    COST.update({16: 1.0, 32: 2.0})
    yield
    _fill_block.cache.clear()


def test_the_autotuners_of_a_module_are_found_without_naming_them():
    assert upstream_picks.autotuners([UPSTREAM]) == {"_fill_block": _fill_block}


def test_a_recorded_pick_is_launched_again_without_tuning_though_upstream_would_pick_otherwise():
    picks = upstream_picks.record([UPSTREAM], _launch)
    assert picks == PICK_16 and sorted(BENCHED) == [16, 32]  # it tuned, and picked the cheaper
    assert upstream_picks.describe(picks) == "fill_block: BLOCK=16 w2 s3"

    _fill_block.cache.clear()  # a new process, where BLOCK 32 times faster now
    COST.update({16: 3.0})
    BENCHED.clear()
    with upstream_picks.pinned([UPSTREAM], picks):
        assert upstream_picks.record([UPSTREAM], _launch) == picks
        assert BENCHED == [] and torch.all(OUT == 16)  # launched at the pick, nothing timed
    assert len(_fill_block.configs) == 2  # its list given back
    assert upstream_picks.record([UPSTREAM], _launch)["_fill_block"]["BLOCK"] == 32


def test_a_pick_upstream_no_longer_lists_cannot_be_pinned():
    gone = {"_fill_block": {**PICK_16["_fill_block"], "BLOCK": 64}}
    refused = pytest.raises(upstream_picks.PickGone, match="lists no config fill_block: BLOCK=64")
    with refused, upstream_picks.pinned([UPSTREAM], gone):
        pass
    assert len(_fill_block.configs) == 2


def _upstream_reference(configs) -> Baseline:
    return Baseline(op="x", soc="H200", case_name="c", part="fwd", source="upstream",
                    configs=configs, median_ms=1.0, p20_ms=1.0, p80_ms=1.0, n=1, samples=[1.0],
                    environment={}, measured_at=datetime(2026, 12, 1, tzinfo=UTC))  # fmt: skip


def test_check_compares_upstream_only_at_the_pick_its_baseline_recorded():
    from contextlib import ExitStack

    recorded = _upstream_reference(PICK_16)
    COST.update({16: 3.0})  # left alone, upstream would pick BLOCK 32 now
    references = [(recorded, _launch)]
    with ExitStack() as held:
        assert _hold_upstream_still(SPEC, references, held) == []
        assert references == [(recorded, _launch)]
        _launch()
        assert torch.all(OUT == 16) and BENCHED == []

    unrecorded = _upstream_reference({})  # a baseline from before picks were recorded
    references = [(unrecorded, _launch)]
    with ExitStack() as held:
        (note,) = _hold_upstream_still(SPEC, references, held)
    assert references == []
    assert note == (
        "upstream not compared: it picks fill_block: BLOCK=32 w4 s3 where its baseline "
        "recorded no autotuned config"
    )

    gone = _upstream_reference({"_fill_block": {**PICK_16["_fill_block"], "num_warps": 8}})
    references = [(gone, _launch)]
    with ExitStack() as held:
        (note,) = _hold_upstream_still(SPEC, references, held)
    assert references == [] and "lists no config fill_block: BLOCK=16 w8 s3" in note


def test_a_baseline_says_where_upstream_picked_otherwise_than_the_previous_one(tmp_path):
    from autotuner.baseline.baseline import changed_picks
    from storage import open_database

    db = open_database(f"sqlite:///{tmp_path}/p.db")
    before = _upstream_reference(PICK_16)
    same = _upstream_reference(PICK_16)
    same.measured_at = datetime(2026, 12, 2, tzinfo=UTC)
    with db.sessions() as session:
        session.add_all([before, same])
        session.commit()
    assert changed_picks(db, [same]) == []
    other = _upstream_reference({"_fill_block": {**PICK_16["_fill_block"], "BLOCK": 32}})
    other.measured_at = datetime(2026, 12, 3, tzinfo=UTC)
    with db.sessions() as session:
        session.add(other)
        session.commit()
        session.refresh(other)
    (line,) = changed_picks(db, [other])
    assert line == (
        "x c fwd: upstream picked fill_block: BLOCK=32 w2 s3 where the baseline of "
        "2026-12-02 00:00 picked fill_block: BLOCK=16 w2 s3"
    )

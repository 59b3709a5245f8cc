"""A study's identity includes its toolchain: an upgrade starts new studies, and what was frozen
under the old one is marked stale by status and check."""

import pytest
from sqlalchemy import select

from autotuner.backends.cpu import CpuBackend
from autotuner.baseline.baseline import record_baselines
from autotuner.baseline.check import check
from autotuner.freeze.freeze import freeze
from autotuner.measure.toolchain import differences, toolchain
from autotuner.report.studies import summarize
from ops import get_op
from storage import Baseline, StudyRecord, open_database

from .test_search import COPY_CASE, COPY_OP, tune


def upgrade_triton(monkeypatch, version="9.9.9"):
    versions = CpuBackend.versions
    monkeypatch.setattr(CpuBackend, "versions", lambda self: {**versions(self), "triton": version})


def test_a_toolchain_change_starts_a_new_study_and_marks_the_old_one_stale(
    tree, tmp_path, monkeypatch
):
    url = f"sqlite:///{tmp_path / 'tc.db'}"
    (old,) = tune(url, trials=3)
    upgrade_triton(monkeypatch)
    (new,) = tune(url, trials=3)
    assert new.name != old.name and new.name.rsplit("/", 1)[0] == old.name.rsplit("/", 1)[0]
    assert new.toolchain["triton"] == "9.9.9" and old.toolchain["triton"] != "9.9.9"
    assert set(new.toolchain) == {"triton", "torch", "launchers"}
    stale = {s.name: s.stale for s in summarize(open_database(url), op=COPY_OP)}
    assert stale == {old.name: True, new.name: False}


def test_freeze_takes_the_newest_toolchains_study_and_check_marks_another_stale(
    tree, tmp_path, monkeypatch
):
    url = f"sqlite:///{tmp_path / 'tc.db'}"
    db = open_database(url)
    tune(url, trials=3)
    upgrade_triton(monkeypatch, "9.9.9")
    (newest,) = tune(url, trials=3)
    result = freeze(db, get_op(COPY_OP), "cpu", label=None, dry_run=False, force=True)
    (entry,) = result.entries
    assert entry.numbers["study"] == newest.name and entry.numbers["toolchain"]["triton"] == "9.9.9"
    backend = CpuBackend()
    spec = get_op(COPY_OP)
    record_baselines(db, spec, backend, [spec.case(COPY_CASE)])
    (same,) = check(db, spec, backend, threshold=100.0).checked
    assert same.toolchain_changes == ()
    upgrade_triton(monkeypatch, "10.0.0")
    (moved,) = check(db, spec, CpuBackend(), threshold=100.0).checked
    assert moved.toolchain_changes == ("fwd: triton 9.9.9 -> 10.0.0",)
    assert moved.as_dict()["stale_toolchain"] == ["fwd: triton 9.9.9 -> 10.0.0"]
    with db.sessions() as session:
        assert session.scalars(select(Baseline)).first() is not None
        assert len(session.scalars(select(StudyRecord)).all()) == 2


def test_launchers_join_the_toolchain_but_the_frozen_configs_do_not(tree):
    from autotuner.atk.generated_block import read_frozen, replace_block
    from core.paths import port_file

    backend = CpuBackend()
    before = toolchain(backend, COPY_OP)
    path = port_file(COPY_OP)
    source = path.read_text()
    frozen = read_frozen(source, path)
    frozen["cpu"] = {"fwd": []}
    path.write_text(replace_block(source, frozen, path))
    assert toolchain(backend, COPY_OP) == before  # a freeze changes nothing
    # The block's functions are launcher code: the shared helpers the template renders.
    helper = "        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))"
    assert helper in source
    path.write_text(source.replace(helper, helper.replace("str(tensor.dtype)", "None")))
    assert differences(before, toolchain(backend, COPY_OP))[0].startswith("launchers ")
    # The pick of a config for a launch that names none is not: a study always names one.
    pick = "            fitted[block] = min(fitted[block], max(16, triton.next_power_of_2(shape[dim])))"
    assert pick in source
    path.write_text(source.replace(pick, pick.replace("min(", "max(")))
    assert toolchain(backend, COPY_OP) == before
    path.write_text(source + "\n\ndef helper():\n    return 1\n")
    assert differences(before, toolchain(backend, COPY_OP))[0].startswith("launchers ")
    assert differences(None, before) == ["unrecorded"]


@pytest.mark.parametrize("key", ["torch", "triton"])
def test_each_version_is_part_of_it(key, monkeypatch):
    backend = CpuBackend()
    versions = CpuBackend.versions
    monkeypatch.setattr(CpuBackend, "versions", lambda self: {**versions(self), key: "0.0.1"})
    assert toolchain(backend, COPY_OP)[key] == "0.0.1"

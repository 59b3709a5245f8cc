"""`autotune freeze` and the GPU baseline in the performance json: a re-tune's database without
baselines keeps the replaced entry's, and an entry kept as it was gets the database's where it
has none."""

import json

from sqlalchemy import select

from autotuner.atk.performance_json import frozen_sections, read
from autotuner.freeze.freeze import freeze
from autotuner.search import runner
from autotuner.search.request import RunRequest
from core.paths import performance_json
from storage import Baseline, StudyRecord

from .test_freeze import OP, SPEC, TUNED, UNTUNED
from .test_freeze import tuned as tuned  # the fixture, shared with test_freeze.py


def test_a_freeze_without_gpu_baselines_keeps_the_replaced_entrys(tuned):
    """A re-tune's database holds no baselines: its freeze keeps the GPU baseline the replaced
    entry has, saying where it came from, and one of the database, where there is one, wins."""
    db, _ = tuned
    freeze(db, SPEC, "cpu", label="M1", dry_run=False, force=False)
    document = json.loads(performance_json(OP).read_text())
    section = document["extra_cases"][0]["frozen"]["cpu"]
    assert section["kernels"]["fwd"]["gpu_baseline_ms"] is None
    section["kernels"]["fwd"].update(gpu_baseline_ms=0.5, gpu_baseline_soc="H200")
    performance_json(OP).write_text(json.dumps(document))

    freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    m2 = json.loads(performance_json(OP).read_text())["extra_cases"][0]["frozen"]["cpu"]
    assert m2["kernels"]["fwd"]["gpu_baseline_ms"] == 0.5
    assert m2["kernels"]["fwd"]["gpu_baseline_soc"] == "H200"
    assert m2["kernels"]["fwd"]["gpu_baseline_from"] == {"label": "M1", "date": section["date"]}

    with db.sessions() as session:
        session.add(Baseline(op=OP, soc="H200", case_name=TUNED, part="fwd", source="upstream",
                             label=None, configs={}, median_ms=0.25, p20_ms=0.25, p80_ms=0.25,
                             n=5, samples=[0.25] * 5, environment={}))  # fmt: skip
        session.commit()
    freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    fwd = json.loads(performance_json(OP).read_text())["extra_cases"][0]["frozen"]["cpu"]
    assert fwd["kernels"]["fwd"]["gpu_baseline_ms"] == 0.25
    assert "gpu_baseline_from" not in fwd["kernels"]["fwd"]


def test_a_kept_entry_without_a_gpu_baseline_gets_the_databases(tuned):
    """An entry frozen before and kept (no settled study of it here) that has no GPU baseline
    gets this database's, dated and labelled by this freeze; one that has a baseline keeps it."""
    db, _ = tuned
    url = str(db.engine.url)
    runner.run(
        RunRequest(
            OP, "cpu", kernels=None, cases=[UNTUNED], trials=8, db_url=url, seed=0, timeout_s=60
        )
    )
    freeze(db, SPEC, "cpu", label="M1", dry_run=False, force=False)
    with db.sessions() as session:
        session.delete(session.scalar(select(StudyRecord).where(StudyRecord.case_name == UNTUNED)))
        for case, ms in ((UNTUNED, 0.25), (TUNED, 0.5)):
            session.add(Baseline(op=OP, soc="H200", case_name=case, part="fwd", source="upstream",
                                 label=None, configs={}, median_ms=ms, p20_ms=ms, p80_ms=ms, n=5,
                                 samples=[ms] * 5, environment={}))  # fmt: skip
        session.commit()
    result = freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    assert result.kept == [f"fwd {UNTUNED}"] and result.filled == [f"fwd {UNTUNED}"]
    sections = frozen_sections(read(performance_json(OP)))
    kept = sections[UNTUNED]["cpu"]["kernels"]["fwd"]
    assert (kept["gpu_baseline_ms"], kept["gpu_baseline_soc"]) == (0.25, "H200")
    assert kept["gpu_baseline_from"]["label"] == "M2" and kept["label"] == "M1"
    assert sections[TUNED]["cpu"]["kernels"]["fwd"]["gpu_baseline_ms"] == 0.5  # its study's
    again = freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    assert again.filled == [] and not again.changed

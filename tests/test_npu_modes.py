"""Ascend compile modes: each mode a study of its own (a column of its record), and `freeze` takes
the best verified winner across the modes of a (kernel, case, soc), mode included.

No NPU here: the studies are real Optuna studies in a real database, planned for the 950PR as
`autotune run` plans them, and measured by a stand-in pipeline whose times favour SIMT code; what
is tested is what the search records and what `freeze` then writes."""

import types

from autotuner.backends import soc_profile
from autotuner.freeze.freeze import freeze
from autotuner.search.pipeline import Job
from autotuner.search.study import Plan, Settings, Study
from ops import get_op
from ops.ports import load_port
from storage import Run, StudyRecord, open_database

OP, KERNEL, CASE = "jagged_to_padded_dense", "fwd", "b2048_n256_d64_fp16"


class StandInPipeline:
    """Times each config by a rule instead of a device: SIMT code is twice as fast, and larger
    tiles are faster, so each study has a clear winner."""

    def prepare(self, job: Job) -> None:
        pass

    @staticmethod
    def ms(config) -> float:
        tiles = config["BLOCK_ROW"] * config["BLOCK_COL"]
        return (0.5 if config.get("compile_mode") == "simt_only" else 1.0) * (1 + 64 / tiles)

    def run(self, proposals, record, abandon) -> None:
        for proposal in proposals:
            ms = self.ms(proposal.config)
            timing = {"median_ms": ms, "p20_ms": ms, "p80_ms": ms, "n": 10}
            record(proposal, {"ok": True, "timing": timing, "error": 0.0, "compile_s": 0.0})

    def samples(self, config, reps: int) -> list[float]:
        return [self.ms(config)] * max(reps, 20)


def tune(db, mode: str) -> StudyRecord:
    spec = get_op(OP)
    case = spec.case(CASE, "performance")
    plan = Plan.make(spec, spec.kernel(KERNEL), case, "950PR", soc_profile("950PR", mode), 12)
    with db.sessions() as session:
        run = Run(op=OP, soc="950PR", command="test", environment={})
        session.add(run)
        session.commit()
        run_id = run.id
    return Study(db, plan, Settings.of(seed=0, timeout_s=60), run_id, StandInPipeline()).run()


def test_a_simt_winner_that_beats_the_simd_one_is_what_freeze_writes(tree, tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'modes.db'}")
    simd, simt = tune(db, "simd"), tune(db, "simt")
    assert (simd.npu_mode, simt.npu_mode) == ("simd", "simt")
    assert "/simt" in simt.name and "/simt" not in simd.name
    assert simt.verdict["winner"]["compile_mode"] == "simt_only"
    result = freeze(db, get_op(OP), "950PR", label="M1", dry_run=False, force=False)
    (entry,) = [e for e in result.entries if e.kernel == KERNEL and e.case == CASE]
    assert entry.config == simt.verdict["winner"] and entry.numbers["study"] == simt.name
    port = load_port(OP, fresh=True)
    (frozen,) = [e for e in port.FROZEN_CONFIGS["950PR"][KERNEL] if e["case"] == CASE]
    assert frozen["config"]["compile_mode"] == "simt_only" and "num_warps" in frozen["config"]
    # The launcher passes the mode and warps it was tuned with to triton-ascend on an NPU.
    npu = types.SimpleNamespace(type="npu", index=0)
    launch = port._split_config(frozen["config"], npu)[1]
    assert (
        launch["compile_mode"] == "simt_only"
        and launch["num_warps"] == frozen["config"]["num_warps"]
    )


def test_a_simd_winner_stays_when_simt_loses(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(
        StandInPipeline, "ms", staticmethod(lambda c: 3.0 if "compile_mode" in c else 1.0)
    )
    db = open_database(f"sqlite:///{tmp_path / 'modes.db'}")
    simd, simt = tune(db, "simd"), tune(db, "simt")
    result = freeze(db, get_op(OP), "950PR", label="M1", dry_run=False, force=False)
    (entry,) = [e for e in result.entries if e.kernel == KERNEL and e.case == CASE]
    assert entry.numbers["study"] == simd.name and "compile_mode" not in entry.config
    assert simt.verdict is not None

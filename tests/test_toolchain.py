"""A study's identity includes its toolchain: an upgrade starts new studies, and what was frozen
under the old one is marked stale by status and check."""

import pytest
import torch
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
    assert set(new.toolchain) == {"triton", "torch", "launch", "launch_helpers"}
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


SOFTMAX = "jagged_softmax"
FWD_KERNEL = "_jagged_softmax_fwd_kernel"


def test_a_launcher_refactor_leaves_configs_current_and_a_kernel_edit_makes_them_stale(tree):
    from autotuner.atk.generated_block import read_frozen, replace_block
    from autotuner.measure.toolchain import launch_fingerprint, stale_configs
    from core.paths import port_file

    spec = get_op(SOFTMAX)
    path = port_file(SOFTMAX)
    source = path.read_text()
    before = launch_fingerprint(SOFTMAX, FWD_KERNEL)
    # Configs tuned under this fingerprint are current.
    write_recorded_fingerprints(spec)
    assert stale_configs(spec) == []
    # A freeze rewrites the generated block: nothing changes.
    frozen = read_frozen(source, path)
    frozen["cpu"] = {"fwd": []}
    path.write_text(replace_block(source, frozen, path))
    assert launch_fingerprint(SOFTMAX, FWD_KERNEL) == before
    # Comments, formatting and docstrings in the launcher, a renamed helper of the launcher:
    launch = "    _jagged_softmax_fwd_kernel["
    assert launch in source
    refactored = source.replace(
        launch, "    # one program per sequence and column block\n" + launch
    )
    refactored = refactored.replace(
        '    """y [sum_L, D]: softmax over', '    """Y [sum_L, D]: the softmax over'
    )
    refactored = refactored.replace(
        "x.stride(0), x.stride(1), y.stride(0)", "x.stride(0),  x.stride(1),\n        y.stride(0)"
    )
    refactored = refactored.replace("_check_inputs", "_validate")
    path.write_text(refactored)
    assert launch_fingerprint(SOFTMAX, FWD_KERNEL) == before
    assert stale_configs(spec) == []
    # An edited kernel makes its configs stale, with one reason, and only its own.
    body = "        pid_b = tile % batch\n"
    assert source.count(body) == 2
    path.write_text(source.replace(body, body + "        pid_b = pid_b + 0\n", 1))
    stale = stale_configs(spec)
    assert stale and {s.kernel for s in stale} == {"fwd"}
    assert {s.reasons for s in stale} == {("kernel or launch arguments changed",)}
    # So does a changed compile-time launch argument.
    path.write_text(
        source.replace(
            "**blocks, **options,\n    )", "**blocks, **options, num_stages=1,\n    )", 1
        )
    )
    assert {s.kernel for s in stale_configs(spec)} == {"fwd"}


BMM_ADD = "jagged_dense_bmm_broadcast_add"


def test_a_function_computing_a_launch_argument_is_part_of_it(tree):
    """`FLAT=_flat(precision, a.dtype, a.device)`: editing `_flat` changes what compiles without
    changing the launch's text, so it makes the configs of the kernels launched with it stale
    (not the third kernel's); its docstring does not; a config recorded before the helpers'
    fingerprint existed is judged by the launch fingerprint alone."""
    import json

    from autotuner.measure.toolchain import HELPERS, stale_configs
    from core.paths import performance_json, port_file

    spec = get_op(BMM_ADD)
    path = port_file(BMM_ADD)
    source = path.read_text()
    write_recorded_fingerprints(spec)
    assert stale_configs(spec) == []
    rule = 'return precision == "ieee" and dtype == torch.float32 and device.type == "cuda"'
    assert source.count(rule) == 1
    path.write_text(source.replace('"""Whether a tile', '"""Whether the tile', 1))
    assert stale_configs(spec) == []
    path.write_text(source.replace(rule, 'return precision == "ieee" and device.type == "cuda"'))
    stale = stale_configs(spec)
    assert {s.kernel for s in stale} == {"fwd", "bwd_dx"}
    assert {s.reasons for s in stale} == {("a function computing launch arguments changed",)}
    performance = performance_json(BMM_ADD)
    data = json.loads(performance.read_text())
    performance.write_text(json.dumps(data).replace(f'"{HELPERS}"', '"unrecorded_key"'))
    assert stale_configs(spec) == []


def write_recorded_fingerprints(spec, launch: str | None = None) -> None:
    """Record the current launch fingerprint (or `launch`) and helpers' fingerprint as the
    toolchain of every frozen config of the op, as a freeze of studies run now (or under another
    kernel) would."""
    import json

    from autotuner.measure.toolchain import HELPERS, LAUNCH, helpers_fingerprint, launch_fingerprint
    from core.paths import performance_json

    path = performance_json(spec.name)
    data = json.loads(path.read_text())
    fingerprints = {k.name: launch_fingerprint(spec.name, k.port_kernel) for k in spec.kernels}
    helpers = {k.name: helpers_fingerprint(spec.name, k.port_kernel) for k in spec.kernels}

    def visit(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "kernels" and isinstance(value, dict):
                    for kernel, entry in value.items():
                        if kernel in fingerprints and isinstance(entry, dict):
                            entry["toolchain"] = {
                                LAUNCH: launch or fingerprints[kernel],
                                HELPERS: helpers[kernel],
                            }
                else:
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(data)
    path.write_text(json.dumps(data, indent=1))


def frozen_socs(spec) -> dict[str, dict]:
    """Case name -> soc -> frozen entry of the op's performance json."""
    from autotuner.atk.performance_json import frozen_sections
    from autotuner.atk.performance_json import read as read_performance_json
    from core.paths import performance_json

    return frozen_sections(read_performance_json(performance_json(spec.name)))


def test_differences_name_what_changed():
    assert differences(None, {"launch": "a"}) == ["toolchain unrecorded"]
    assert differences({"launchers": "x"}, {"launch": "a"}) == [
        "tuned before launch fingerprints were recorded"
    ]
    assert differences({"launch": "a", "triton": "3.5"}, {"launch": "a"}) == []  # no versions
    assert differences({"launch": "a", "triton": "3.5"}, {"launch": "a", "triton": "3.6"}) == [
        "triton 3.5 -> 3.6"
    ]


@pytest.mark.parametrize("key", ["torch", "triton"])
def test_each_version_is_part_of_it(key, monkeypatch):
    backend = CpuBackend()
    versions = CpuBackend.versions
    monkeypatch.setattr(CpuBackend, "versions", lambda self: {**versions(self), key: "0.0.1"})
    assert toolchain(backend, COPY_OP, get_op(COPY_OP).kernels[0].port_kernel)[key] == "0.0.1"


def test_status_and_the_dashboard_count_stale_configs_per_op(tree, tmp_path):
    from fastapi.testclient import TestClient

    from api.main import create_app
    from autotuner.measure.toolchain import stale_configs

    from .conftest import autotune_cli

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    spec = get_op(SOFTMAX)
    write_recorded_fingerprints(spec, launch="0" * 16)  # as if tuned under another kernel
    count = len(stale_configs(spec))
    frozen = [e for by_soc in frozen_socs(spec).values() for e in by_soc.values()]
    assert count == sum(len(e["kernels"]) for e in frozen) > 0
    html = TestClient(create_app(url)).get("/").text
    assert f'data-stale="{SOFTMAX}" title="stale: {SOFTMAX}: {count} frozen configs' in html
    assert f"({count} stale)" in html
    status = autotune_cli("status", "--op", SOFTMAX, "--db", url, env={"AUTOTUNE_ROOT": str(tree)})
    assert status.returncode == 0, status.stderr
    (line,) = [x for x in status.stdout.splitlines() if x.startswith("stale:")]
    assert line.startswith(f"stale: {SOFTMAX}: {count} frozen configs (bwd, fwd): ")
    write_recorded_fingerprints(spec)
    assert f'data-stale="{SOFTMAX}"' not in TestClient(create_app(url)).get("/").text


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")
def test_status_says_when_it_cannot_compare_versions(tmp_path):
    """`status --soc H200` off the GPU knows only the launch fingerprints: it says so in one line
    and still lists what it knows."""
    from .conftest import autotune_cli

    url = f"sqlite:///{tmp_path / 'a.db'}"
    open_database(url).engine.dispose()  # an empty database
    status = autotune_cli("status", "--soc", "H200", "--db", url)
    assert status.returncode == 0, status.stderr
    (note,) = status.stderr.strip().splitlines()
    assert note.startswith("note: versions not compared (soc 'H200' is not on this machine")


def test_run_stale_tunes_only_the_stale_pairs(tree, tmp_path):
    """`autotune run --stale`: a round re-tunes what may have moved, and nothing else."""
    import dataclasses
    import json

    from autotuner.measure.toolchain import LAUNCH, stale_configs
    from autotuner.search import runner
    from autotuner.search.request import RunRequest
    from core.paths import performance_json

    from .conftest import autotune_cli

    url = f"sqlite:///{tmp_path / 'stale.db'}"
    spec = get_op(COPY_OP)
    other = "b1_n8_d16_fp16"
    for case in (COPY_CASE, other):
        tune(url, case=case, trials=2)
    freeze(open_database(url), spec, "cpu", label=None, dry_run=False, force=True)
    assert stale_configs(spec, CpuBackend().versions(), "cpu") == []
    run = ("run", "--op", COPY_OP, "--soc", "cpu", "--stale", "--trials", "2", "--quiet")
    done = autotune_cli(*run, "--db", url, env={"AUTOTUNE_ROOT": str(tree)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no stale frozen config of jagged_to_padded_dense on cpu" in done.stdout
    # The frozen config of one case was tuned under another kernel.
    path = performance_json(COPY_OP)
    data = json.loads(path.read_text())
    (entry,) = [c for c in data["extra_cases"] if c["name"] == other]  # not a performance case
    entry["frozen"]["cpu"]["kernels"]["fwd"]["toolchain"][LAUNCH] = "0" * 16
    path.write_text(json.dumps(data, indent=1))
    stale = RunRequest(COPY_OP, "cpu", trials=2, db_url=url, timeout_s=60.0, only_stale=True)
    records = runner.run(stale)
    assert [(r.kernel, r.case_name) for r in records] == [("fwd", other)]
    assert runner.run(dataclasses.replace(stale, cases=[COPY_CASE])) == []
    # Naming the stale case (`--stale --case X`) once crashed: the names asked for stood in for
    # the cases asked by shape.
    named = autotune_cli(*run, "--case", other, "--db", url, env={"AUTOTUNE_ROOT": str(tree)})
    assert named.returncode == 0, named.stderr[-2000:]
    again = runner.run(dataclasses.replace(stale, cases=[other]))
    assert [(r.kernel, r.case_name) for r in again] == [("fwd", other)]

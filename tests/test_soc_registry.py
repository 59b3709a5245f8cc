"""The soc registry (`core.socs`) is the one home of a soc's facts: a new soc is one entry."""

import dataclasses
import json
import subprocess
import sys

import pytest
import sqlalchemy as sa
from sqlalchemy import select

from autotuner.backends import BACKENDS, soc_profile
from autotuner.backends.compile import compile_socs
from autotuner.backends.npu import npu_limits
from autotuner.backends.npu_options import OPTIONS, left_out, option_defaults
from core.errors import UserError
from core.socs import SOCS, BackendKind, Soc, check_soc, soc_from_device_name, socs_of
from ops.npu_tunables import MULTIBUFFER
from storage import Baseline, open_database
from storage.models import measuring_backend

from .conftest import ROOT

FAKE = "910Z"
SPACE = ("space", "--op", "jagged_to_padded_dense", "--kernel", "fwd", "--case", "b1_n8_d16_fp32")


def fake_entry() -> Soc:
    """The 910B's entry under another name and device name."""
    return dataclasses.replace(SOCS["910B"], name=FAKE, patterns=(r"^Ascend910Z",))


def space_report(soc: str, registered: bool) -> dict:
    """`autotune space ... --json` in a fresh process, with the fake soc registered first."""
    register = (
        "import dataclasses\n"
        "from core.socs import SOCS\n"
        f"SOCS[{FAKE!r}] = dataclasses.replace(SOCS['910B'], name={FAKE!r}, "
        "patterns=(r'^Ascend910Z',))\n"
        if registered
        else ""
    )
    script = (
        f"{register}import sys\nfrom autotune.cli import main\nsys.argv[0] = 'autotune'\nmain()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *SPACE, "--soc", soc, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_copy_of_the_910b_entry_is_a_soc_space_describes_as_the_910b():
    fake = space_report(FAKE, registered=True)
    assert fake["feasible"] and fake == space_report("910B", registered=False)


def test_without_its_entry_the_soc_is_unknown():
    with pytest.raises(UserError, match=f"unknown soc '{FAKE}'; known socs: cpu, 950PR, 950DT"):
        soc_profile(FAKE)


def test_every_fact_of_a_registered_soc_follows_from_its_entry(monkeypatch):
    monkeypatch.setitem(SOCS, FAKE, fake_entry())
    assert soc_from_device_name("Ascend910Z1") == FAKE
    assert socs_of(BackendKind.NPU)[-1] == FAKE and FAKE in compile_socs()
    assert npu_limits(FAKE) == npu_limits("910B")
    assert soc_profile(FAKE) == soc_profile("910B")
    assert measuring_backend(FAKE, interpreter=False) == BackendKind.NPU


def test_each_ascend_socs_compile_target_names_the_soc_itself():
    for name in socs_of(BackendKind.NPU):
        assert soc_from_device_name(SOCS[name].compile_target) == name


def test_a_family_names_only_compiler_options_there_are():
    for name in socs_of(BackendKind.NPU):
        family = SOCS[name].family
        assert set(family.option_defaults) <= set(OPTIONS) - {MULTIBUFFER.name}
        assert set(family.left_out) <= set(OPTIONS)
        assert set(option_defaults(name)) == {*OPTIONS, MULTIBUFFER.name}
        assert set(family.left_out) <= set(left_out(name, None))


def test_every_kind_has_a_backend_and_every_soc_a_kind():
    assert set(BACKENDS) == set(BackendKind)
    assert all(BACKENDS[kind].kind == kind for kind in BackendKind)
    assert {check_soc(name).kind for name in SOCS} == set(BackendKind)


def test_a_rows_backend_kind_is_stored_as_its_plain_name(any_db):
    """A kind given as the enum and a kind that follows from the soc are both the words
    "cuda", "npu", "cpu" in the table, and a query by the enum finds them."""
    db = open_database(any_db)
    rows = {  # soc -> (interpreter, backend given)
        "H200": (False, BackendKind.CUDA),
        "950PR": (False, None),
        "Ascend310P3": (False, None),
        "cpu": (True, None),
    }
    with db.sessions() as session:
        for soc, (interpreter, backend) in rows.items():
            given = {"backend": backend} if backend else {}
            session.add(
                Baseline(
                    op="op", soc=soc, case_name="c", part="fwd", source="upstream", label=None,
                    configs={}, median_ms=1.0, p20_ms=1.0, p80_ms=1.0, n=1, samples=[1.0],
                    interpreter=interpreter, environment={}, **given,
                )
            )  # fmt: skip
        session.commit()
    with db.sessions() as session:
        stored = dict(session.execute(sa.text("SELECT soc, backend FROM autotune_baselines")).all())
        gpu = session.scalars(select(Baseline.soc).where(Baseline.backend == BackendKind.CUDA))
        assert list(gpu) == ["H200"]
    assert stored == {"H200": "cuda", "950PR": "npu", "Ascend310P3": "npu", "cpu": "cpu"}
    assert all(type(kind) is str for kind in stored.values())

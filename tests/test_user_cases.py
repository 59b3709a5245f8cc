"""User cases: given by shape and lengths, named, stored, tuned, frozen, checked and verified."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from autotuner.cases import store
from autotuner.cases.options import CaseRequest, draw_lengths, read_lengths
from core.errors import UserError
from core.paths import cases_file, frozen_configs_file
from ops import get_op
from storage import Base, UserCase, open_database

OP = "jagged_to_padded_dense"
SPEC = get_op(OP)
SHAPE = "B=3,max_seq_len=20,D=8"


def autotune(*args):
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "250"},
        timeout=600,
    )


def named(**options):
    (entry,) = CaseRequest(**options).entries(SPEC)
    return entry


def test_a_name_says_shape_and_dtype_and_hashes_the_lengths(tmp_path):
    by_offsets = named(shape=SHAPE, offsets="0,5,5,31")
    lengths = tmp_path / "lengths.txt"
    lengths.write_text("5\n0\n\n26\n")
    by_file = named(shape=SHAPE, lengths_file=lengths)
    array = tmp_path / "lengths.npy"
    np.save(array, np.array([5, 0, 26], dtype=np.int32))
    by_array = named(shape=SHAPE, lengths_file=array)
    assert by_offsets["name"].startswith("b3_n20_d8_fp32_u") and len(by_offsets["name"]) == 24
    assert by_offsets["name"] == by_file["name"] == by_array["name"]  # the same data, one name
    assert by_offsets["lengths"] == [5, 0, 26] and by_file["source"] == "--lengths-file lengths.txt"
    assert named(shape=SHAPE, offsets="0,5,6,31")["name"] != by_offsets["name"]
    assert named(shape=SHAPE, offsets="0,5,5,31", dtype="bf16")["name"].startswith(
        "b3_n20_d8_bf16_u"
    )


def test_jagged2_offsets_are_kept_verbatim():
    spec = get_op("jagged_dense_elementwise_mul_jagged_out")
    (entry,) = CaseRequest(shape="B=2,max_seq_len=8", offsets="0,9,25").entries(spec)
    assert entry["offsets"] == [0, 9, 25]  # sums of L^2: lengths 3 and 4
    (case,) = CaseRequest(shape="B=2,max_seq_len=8", offsets="0,9,25").cases(spec, True)
    assert case.lengths == (3, 4) and case.offsets == (0, 9, 25)


def test_distributions_are_seeded():
    first, spelled = draw_lengths("lognormal:mean=120,sigma=0.8", 4096)
    again, _ = draw_lengths("lognormal:mean=120,sigma=0.8,seed=0", 4096)
    other, _ = draw_lengths("lognormal:mean=120,sigma=0.8,seed=1", 4096)
    assert first == again != other and spelled == "lognormal:mean=120,sigma=0.8,seed=0"
    assert 110 < np.mean(first) < 130 and min(first) >= 0  # `mean` is the lengths' own mean
    uniform, _ = draw_lengths("uniform:low=10,high=20", 1000)
    assert min(uniform) >= 10 and max(uniform) <= 20


def test_histogram_bins_and_their_quantiles():
    assert store.bin_edges(13) == [0, 1, 2, 3, 4, 6, 8, 12, 16]
    assert [store.edge(i) for i in range(12)] == [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    hist = store.histogram({0: 4, 9: 4})  # empty sequences and lengths in [24, 32)
    assert hist == {"edges": [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32], "counts": [4] + [0] * 8 + [4]}
    lengths = store.lengths_from_histogram(hist, 1000)
    assert sum(n == 0 for n in lengths) == 500 and all(n == 0 or 24 <= n < 32 for n in lengths)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"shape": "B=3,max_seq_len=20,D=8,X=1"},
            "shapes take exactly B, max_seq_len, D; unknown X",
        ),
        ({"shape": "B=3,max_seq_len=x,D=8"}, "malformed --shape value 'x' for max_seq_len"),
        ({"shape": "B=3,D=8"}, "missing max_seq_len"),
        ({"shape": SHAPE, "offsets": "0,5,31"}, "3 offsets given; B=3 needs B + 1 = 4"),
        ({"shape": SHAPE, "offsets": "0,5,3,31"}, "offsets must be non-decreasing"),
        ({"shape": SHAPE, "offsets": "1,5,5,31"}, "offsets must start at 0, not 1"),
        ({"shape": SHAPE, "lengths_dist": "gamma:k=2"}, "unknown --lengths-dist 'gamma'"),
        ({"shape": SHAPE, "lengths_dist": "lognormal:mean=5"}, "takes mean, sigma"),
        ({"offsets": "0,1"}, "--offsets goes with --shape"),
    ],
)
def test_bad_user_cases_are_refused(options, message):
    with pytest.raises((UserError, ValueError), match=re.escape(message)):
        CaseRequest(**options).entries(SPEC)


def test_bad_lengths_files_are_refused(tmp_path):
    short, words, matrix = tmp_path / "short.txt", tmp_path / "words.txt", tmp_path / "m.npy"
    short.write_text("1\n2\n")
    words.write_text("1\ntwo\n3\n")
    np.save(matrix, np.zeros((3, 2), dtype=np.int64))
    for path, message in [
        (short, "2 lengths given; B=3 needs 3"),
        (words, "line 2: 'two' is not an integer"),
        (matrix, "expected a 1-D integer array"),
        (tmp_path / "missing.txt", "cannot read lengths file"),
    ]:
        with pytest.raises(UserError, match=message):
            named(shape=SHAPE, lengths_file=path)
    assert read_lengths(short) == [1, 2]


def test_a_hand_edited_entry_is_refused(tree):
    entry = named(shape=SHAPE, offsets="0,5,5,31")
    store.register(SPEC, [entry], None)
    text = cases_file(OP).read_text().replace("[5, 0, 26]", "[5, 1, 26]")
    cases_file(OP).write_text(text)
    with pytest.raises(UserError, match="edited by hand"):
        store.user_cases(SPEC, "accuracy")


def test_the_database_keeps_a_copy_other_checkouts_find(tree, tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'cases.db'}")
    entry = named(shape=SHAPE, lengths_dist="exponential:mean=6")
    assert store.register(SPEC, [entry], db) == [entry["name"]]
    assert store.register(SPEC, [entry], db) == []  # already there: nothing added
    cases_file(OP).unlink()  # another checkout: its file lacks the case
    with db.sessions() as session:
        assert session.query(UserCase).count() == 1
    ((case, stored),) = store.user_cases(SPEC, "accuracy", db)
    assert case.name == entry["name"] and stored == entry and case.kind == "accuracy"
    assert store.user_cases(SPEC, "accuracy") == []


def test_the_migration_creates_the_model_table(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'schema.db'}")
    with db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert [d for d in diff if "autotune_user_cases" in repr(d)] == []


@pytest.mark.parametrize(
    "extra",
    [
        ["--shape", "B=3,max_seq_len=20,D=8,X=1"],
        ["--shape", "B=3,max_seq_len=twenty,D=8"],
        ["--shape", "B=3,D=8"],
        ["--shape", SHAPE, "--offsets", "0,5,31"],
        ["--shape", SHAPE, "--lengths-file", "no_such_lengths.txt"],
    ],
)
def test_bad_input_on_the_command_line_writes_nothing(tree, tmp_path, extra):
    url = f"sqlite:///{tmp_path / 'never.db'}"
    result = autotune("run", "--op", OP, "--soc", "cpu", "--trials", "8", "--db", url, *extra)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert not (tree / "cases").exists() and not (tmp_path / "never.db").exists()


def test_a_user_case_is_tuned_frozen_baselined_checked_and_verified(tree, tmp_path):
    db = ["--db", f"sqlite:///{tmp_path / 'user.db'}"]
    case = ["--shape", SHAPE, "--offsets", "0,5,5,31"]
    run = autotune("run", "--op", OP, "--soc", "cpu", *case, "--trials", "8", "--quiet", *db)
    assert run.returncode == 0, run.stdout + run.stderr
    (entry,) = yaml.safe_load(cases_file(OP).read_text())["cases"]
    name = entry["name"]
    assert entry["lengths"] == [5, 0, 26] and entry["shape"] == {"B": 3, "max_seq_len": 20, "D": 8}

    frozen = autotune("freeze", "--op", OP, "--soc", "cpu", "--force", *db)
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    document = json.loads(frozen_configs_file("cpu", OP).read_text())
    assert [e["case"] for e in document["frozen"]["fwd"]] == [name]

    baseline = autotune("baseline", "--op", OP, "--soc", "cpu", *case, *db)
    assert baseline.returncode == 0 and baseline.stdout.count(name) == 3, baseline.stdout
    check = autotune("check", "--op", OP, "--soc", "cpu", *db)  # finds it by name alone
    assert check.returncode in (0, 1) and name in check.stdout, check.stdout + check.stderr
    verify = autotune("verify", "--op", OP, "--soc", "cpu", "--cases", "user")
    assert verify.returncode == 0 and name in verify.stdout, verify.stdout + verify.stderr
    listed = autotune("cases", "--op", OP, *db)
    assert f"{name} │ user" in listed.stdout and "--offsets" in listed.stdout, listed.stdout


def test_cases_adds_a_given_case_without_running_it_and_space_takes_it(tree, tmp_path):
    """`autotune cases --shape ...` writes the case, named by its lengths' hash, and runs nothing;
    `autotune space --case` then finds it as a run would."""
    db = ["--db", f"sqlite:///{tmp_path / 'user.db'}"]
    case = ["--shape", SHAPE, "--offsets", "0,5,5,31"]
    added = autotune("cases", "--op", OP, *case, *db)
    assert added.returncode == 0, added.stdout + added.stderr
    (entry,) = yaml.safe_load(cases_file(OP).read_text())["cases"]
    assert f"added to cases/{OP}.yaml: {entry['name']}" in added.stdout
    assert f"{entry['name']} │ user" in added.stdout
    again = autotune("cases", "--op", OP, *case, *db)
    assert (
        "nothing new" in again.stdout
        and len(yaml.safe_load(cases_file(OP).read_text())["cases"]) == 1
    )
    space = autotune("space", "--op", OP, "--kernel", "fwd", "--case", entry["name"], "--soc",
                     "cpu", "--json")  # fmt: skip
    assert space.returncode == 0 and json.loads(space.stdout)["feasible"], space.stderr


def test_lengths_over_max_seq_len_are_one_warning():
    import warnings

    from autotuner.cases.options import CaseRequest
    from autotuner.cases.store import CaseWarning

    spec = get_op("dense_to_jagged")
    over = CaseRequest(shape="B=2,max_seq_len=4,D=8", offsets="0,6,8")
    with pytest.warns(
        CaseWarning, match=r"1 of 2 lengths are over max_seq_len=4 \(the longest 6\)"
    ):
        over.entries(spec)
    within = CaseRequest(shape="B=2,max_seq_len=6,D=8", offsets="0,6,8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert within.entries(spec)[0]["lengths"] == [6, 2]


def test_a_dense_op_takes_a_shape_alone(tree):
    """recsys-examples' norms have no sequences: --shape names the case, its entry has no
    lengths, a lengths option is one line, and the stored case reads back as the same case."""
    spec = get_op("group_norm_mul_dropout")
    (entry,) = CaseRequest(shape="N=3,H=2,D=500", dtype="bf16").entries(spec)
    assert entry["name"] == "n3_h2_d500_bf16_u" and "lengths" not in entry
    assert entry["shape"] == {"N": 3, "H": 2, "D": 500} and entry["source"] == "--shape"
    store.register(spec, [entry], None)
    ((case, stored),) = store.user_cases(spec, "accuracy")
    assert case.name == entry["name"] and case.shape == entry["shape"] and stored == entry
    with pytest.raises(UserError, match="takes dense rows: --offsets is for jagged ops"):
        CaseRequest(shape="N=3,H=2,D=500", offsets="0,1").entries(spec)
    with pytest.raises(UserError, match="its rows are dense: no lengths"):
        store.case_of(spec, {**entry, "lengths": [1, 2, 3]}, "accuracy")
    result = autotune("verify", "--op", spec.name, "--soc", "cpu", "--shape", "N=3,H=2,D=5000")
    assert result.returncode == 0 and "n3_h2_d5000_fp32_u " in result.stdout, result.stderr

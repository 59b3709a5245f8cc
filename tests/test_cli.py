"""The command line as a user runs it: a real process, exit codes and what it prints."""

import functools

import pytest

from core.paths import ATK_ROOT
from ops import all_ops

from .conftest import autotune_cli, verify_all_passed

#: Verify --all on the interpreter takes minutes: a longer bound than the other CLI tests.
autotune = functools.partial(autotune_cli, timeout=600)


def test_verify_all_on_the_interpreter_passes(tmp_path):
    result = autotune("verify", "--all", "--soc", "cpu", "--db", f"sqlite:///{tmp_path}/v.db")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert verify_all_passed(summary), summary
    assert "FAIL" not in result.stdout


def test_verify_a_custom_case(tmp_path):
    result = autotune(
        "verify",
        "--db",
        f"sqlite:///{tmp_path}/v.db",
        "--op",
        "dense_to_jagged",
        "--soc",
        "cpu",
        "--shape",
        "B=3,max_seq_len=4,D=8",
        "--offsets",
        "0,5,5,9",
        "--dtype",
        "bf16",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "b3_n4_d8_bf16" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["verify", "--op", "no_such_op"],
            f"error: unknown op 'no_such_op'; known ops: {', '.join(sorted(all_ops()))}",
        ),
        (
            ["verify", "--all", "--soc", "B300X"],
            "error: unknown soc 'B300X'; known socs: cpu, 950PR",
        ),
        (
            ["verify", "--all", "--soc", "950PR"],
            "error: soc '950PR' needs an Ascend NPU; this machine has: ",
        ),
        (
            ["verify", "--all", "--soc", "cpu", "--dtype", "fp12"],
            "error: unknown dtype 'fp12'; use one of float32, float16, bfloat16",
        ),
        (
            [
                "verify",
                "--op",
                "jagged_to_padded_dense",
                "--soc",
                "cpu",
                "--shape",
                "B=3,max_seq_len=4,D=8",
                "--offsets",
                "0,5,3,8",
            ],
            "error: offsets must be non-decreasing: offsets[2]=3 < offsets[1]=5",
        ),
        (
            [
                "verify",
                "--op",
                "jagged_dense_flash_attention",
                "--soc",
                "cpu",
                "--shape",
                "B=2,max_seq_len=4,D=8,T=4",
                "--offsets",
                "1,3,5",
            ],
            "error: offsets must start at 0, not 1",
        ),
        (
            ["verify", "--op", "dense_to_jagged", "--soc", "cpu", "--shape", "B=3;D=4"],
            "error: malformed --shape value '3;D=4' for B: not an integer",
        ),
        (
            ["verify", "--op", "dense_to_jagged", "--soc", "cpu", "--shape", "B=3,D=4"],
            "error: dense_to_jagged shapes take exactly B, max_seq_len, D; missing max_seq_len",
        ),
        (
            ["verify", "--op", "dense_to_jagged", "--soc", "cpu", "--shape", "max_seq_len"],
            "error: malformed --shape part 'max_seq_len': expected KEY=INT",
        ),
        (["verify"], "error: name an op with --op, or use --all"),
        (
            ["run", "--op", "jagged_dense_flash_attention", "--soc", "cpu", "--kernel", "fwdd"],
            "error: unknown kernel 'fwdd' for jagged_dense_flash_attention; valid: fwd, bwd_preprocess, bwd_dv_db_dq, bwd_dk",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "cpu", "--case", "nope"],
            "error: unknown case 'nope' for dense_to_jagged on cpu (accuracy cases); valid: b1_n8_d16_fp32, ",
        ),
        (
            [
                "run",
                "--op",
                "dense_to_jagged",
                "--soc",
                "cpu",
                "--db",
                "postgresql+psycopg://nobody@127.0.0.1:5999/none",
            ],
            "error: cannot reach the database postgresql+psycopg://nobody@127.0.0.1:5999/none: connection failed",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "cpu", "--trials", "0"],
            "error: --trials must be a positive number of trials per study or a share in (0%, 100%], not 0",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "cpu", "--trials", "-3"],
            "error: --trials must be a positive number of trials per study or a share in (0%, 100%], not -3",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "cpu", "--trials", "150%"],
            "error: --trials must be a positive number of trials per study or a share in (0%, 100%], not 150%",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "cpu", "--trials", "many"],
            "error: malformed --trials 'many'",
        ),
        (
            ["run", "--op", "dense_to_jagged", "--soc", "950DT"],
            "error: soc '950DT' needs an Ascend NPU; this machine has: ",
        ),
        (
            ["status", "--db", "sqlite:////no/such/dir/x.db"],
            "error: no database at /no/such/dir/x.db: nothing recorded there yet",
        ),
        (
            ["serve", "--port", "99999"],
            "error: Invalid value for '--port': Input should be less than or equal to 65535 "
            "(see autotune serve --help)",
        ),
        (
            ["check", "--op", "jagged_softmax", "--soc", "cpu", "--threshold", "abc"],
            "error: Invalid value for '--threshold': ",
        ),
        (["status", "--op"], "error: Option '--op' requires an argument."),
        (["nosuch"], "error: No such command 'nosuch'."),
        (
            ["export", "/no/such/dir/out.json"],
            "error: cannot write /no/such/dir/out.json: folder /no/such/dir does not exist",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    result = autotune(*args, env={"AUTOTUNE_DB": f"sqlite:///{tmp_path}/unused.db"})
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["trials", "--op", "jagged_softmax"],
        ["report", "--soc", "H200"],
        ["check", "--op", "jagged_softmax", "--soc", "cpu"],
        ["export", "out.json"],
    ],
)
def test_reading_commands_never_create_a_database(args, tmp_path):
    """A mistyped --db is one line naming the file, exit 2, and no file appears."""
    missing = tmp_path / "mistyped.db"
    result = autotune(*args, "--db", f"sqlite:///{missing}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: no database at {missing}: nothing recorded there yet "
        "(check --db or AUTOTUNE_DB; `autotune run` creates it)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_show_and_cases_read_the_checkout_without_a_database(tmp_path):
    """Their main source is the checkout: a missing database is a note, and none is created."""
    missing = tmp_path / "none.db"
    for args in (["show", "--op", "jagged_softmax"], ["cases", "--op", "jagged_softmax"]):
        result = autotune(*args, "--db", f"sqlite:///{missing}")
        assert result.returncode == 0, result.stderr
        assert result.stderr.startswith(f"note: no database at {missing}")
    assert "b2048_n256_d64_fp16" in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_lint_command(tree):
    assert autotune("lint", env={"AUTOTUNE_ROOT": str(tree)}).returncode == 0
    yaml_path = tree / ATK_ROOT / "dense_to_jagged" / "npu_atk_test" / "dense_to_jagged.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("name: dense_to_jagged", "name: wrong"))
    result = autotune("lint", env={"AUTOTUNE_ROOT": str(tree)})
    assert result.returncode == 1
    assert f"{yaml_path}: name is 'wrong', must name the op 'dense_to_jagged'" in result.stdout


def test_run_then_status(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    result = autotune(
        "run",
        "--op",
        "dense_to_jagged",
        "--soc",
        "cpu",
        "--case",
        "b1_n8_d16_bf16",
        "--trials",
        "4",
        "--db",
        url,
    )
    assert result.returncode == 0, result.stderr
    assert (
        "autotune run --op dense_to_jagged: 1 studies" in result.stdout and "4/0/" in result.stdout
    )
    assert "Triton interpreter times" in result.stdout  # never shown as performance
    assert result.stderr.strip().splitlines()[-1].startswith("next: interpreter winners")
    status = autotune("status", "--db", url)
    assert status.returncode == 0 and "b1_n8_d16_bf16" in status.stdout and "4/0/" in status.stdout
    assert "not performance numbers" in status.stdout
    assert not (tmp_path / "b.db").exists()
    bad = autotune(
        "run",
        "--op",
        "dense_to_jagged",
        "--soc",
        "cpu",
        "--kernel",
        "nope",
        "--db",
        f"sqlite:///{tmp_path / 'b.db'}",
    )
    assert bad.returncode == 2 and not (tmp_path / "b.db").exists()  # nothing written


def test_ops_lists_kernels_and_tunables():
    result = autotune("ops")
    assert result.returncode == 0
    for text in ("jagged_dense_flash_attention", "bwd_dv_db_dq", "BLOCK_ROW", "num_stages"):
        assert text in result.stdout

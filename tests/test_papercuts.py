"""Small things a new user meets (issue 48): each is one line and the right exit code, with
nothing written, or the result the README promises."""

import pytest

from storage import open_database

from .conftest import autotune_cli

OP = "jagged_to_padded_dense"


def one_error_line(result, *words):
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and all(w in line for w in words), line


def test_a_missing_autotune_root_is_one_line(tmp_path):
    missing = tmp_path / "no_such_checkout"
    result = autotune_cli("run", "--op", OP, "--soc", "cpu", env={"AUTOTUNE_ROOT": str(missing)})
    one_error_line(result, f"AUTOTUNE_ROOT={missing} is not a folder")
    assert not missing.exists()


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        (("--timeout", "0"), ("--timeout must be a positive number of seconds, not 0",)),
        (("--timeout", "-3"), ("--timeout", "not -3")),
        (("--seed", "-1"), ("'--seed'", "greater than or equal to 0")),
        (("--timer", "sundial"), ("unknown --timer 'sundial'; use one of host, cuda-events",)),
        (("--timer", "npu-events"), ("--timer npu-events cannot time soc 'cpu'; use one of host",)),
    ],
)
def test_run_refuses_a_timeout_seed_or_timer_that_cannot_work(tree, flag, words):
    url = f"sqlite:///{tree / 'never.db'}"
    result = autotune_cli("run", "--op", OP, "--soc", "cpu", "--db", url, *flag, cwd=tree)
    one_error_line(result, *words)
    assert not (tree / "never.db").exists()


def test_ops_shows_the_shape_keys_of_each_op():
    result = autotune_cli("ops")
    assert result.returncode == 0, result.stderr
    assert "--shape keys" in result.stdout
    assert "B,max_seq_len,D" in result.stdout and "N,D" in result.stdout


def test_report_sees_the_repositorys_h200_baselines(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    open_database(url)  # a fresh database: the checkout's performance json files are all there is
    result = autotune_cli("report", "--soc", "H200", "--db", url)
    assert result.returncode == 0, result.stderr
    assert "No baselines of the port" not in result.stdout
    assert f"| {OP} | b2048_n256_d64_fp16 | fwd |" in result.stdout
    everything = autotune_cli("report", "--db", url)
    assert "## H200" in everything.stdout


def _with_failed_default(db_url, category):
    """A tuned study, plus a failed trial of its default config (what a Ctrl-C's abandon or a
    crash records)."""
    import optuna

    from autotuner.search import runner
    from autotuner.search.request import RunRequest

    (record,) = runner.run(
        RunRequest(
            OP,
            "cpu",
            cases=["b1_n8_d16_fp32"],
            trials=2,
            db_url=db_url,
            timeout_s=60,
        )
    )
    study = optuna.load_study(study_name=record.name, storage=db_url)
    attrs = {"config": record.default_config, "category": category, "message": ""}
    study.add_trial(optuna.trial.create_trial(state=optuna.trial.TrialState.FAIL, user_attrs=attrs))
    return record


def test_an_interrupted_trial_is_not_a_failed_default(tree, tmp_path):
    from autotuner.report.studies import summarize

    url = f"sqlite:///{tmp_path / 'ctrl_c.db'}"
    _with_failed_default(url, "interrupted")
    (summary,) = summarize(open_database(url), op=OP)
    assert summary.default_failure is None and summary.default_ms is not None
    assert summary.failures == {"interrupted": 1}


def test_a_key_added_at_its_default_is_no_config_change(tmp_path):
    """The checkout's jagged_to_padded_dense H200 entries moved from M1 (frozen before PROGRAMS
    existed) to M2 with PROGRAMS=0, the classic grid M1 launched: the same config."""
    from fastapi.testclient import TestClient

    from api.cases import _kernel
    from api.main import create_app

    m2 = {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 2, "PROGRAMS": 0}
    entry = {"config": m2, "previous": {"label": "M1", "config": {**m2, "PROGRAMS": 0}}}
    del entry["previous"]["config"]["PROGRAMS"]
    assert _kernel(OP, "fwd", entry).previous.config_changed is False
    entry["previous"]["config"]["num_warps"] = 4
    assert _kernel(OP, "fwd", entry).previous.config_changed is True
    entry["previous"]["config"] = {**m2, "PROGRAMS": 2}
    assert _kernel(OP, "fwd", entry).previous.config_changed is True

    page = TestClient(create_app(f"sqlite:///{tmp_path / 'op.db'}")).get(f"/ops/{OP}")
    assert page.status_code == 200
    assert "M1 -&gt; M2: config unchanged" in page.text or "M1 -> M2: config unchanged" in page.text


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_says_in_one_line_that_a_port_is_taken(tmp_path):
    import socket

    url = f"sqlite:///{tmp_path / 'serve.db'}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        for flags in (
            ("--port", str(taken)),
            ("--port", str(_free_port()), "--optuna-dashboard", str(taken)),
        ):
            result = autotune_cli("serve", "--db", url, *flags, timeout=60)
            one_error_line(result, f"port {taken} on 127.0.0.1 is taken", flags[-2])
            assert "http://" not in result.stdout


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("optuna_dashboard") is None,
    reason="optuna-dashboard is not installed (the optuna-dashboard extra)",
)
def test_sigterm_to_serve_stops_optuna_dashboard_too(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    import psutil

    from .conftest import ROOT

    url = f"sqlite:///{tmp_path / 'serve.db'}"
    open_database(url)
    ours, theirs = _free_port(), _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "autotuner", "serve", "--db", url, "--port", str(ours),
         "--optuna-dashboard", str(theirs)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    children = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{theirs}/api/studies", timeout=5)
                urllib.request.urlopen(f"http://127.0.0.1:{ours}/", timeout=5)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.5)
        children = psutil.Process(server.pid).children(recursive=True)
        assert children
        server.send_signal(signal.SIGTERM)  # to the parent alone, as a service manager does
        server.wait(30)
        _, alive = psutil.wait_procs(children, timeout=15)
        assert alive == []
    finally:
        for process in [server, *children]:
            if process.poll() is None if process is server else process.is_running():
                process.kill()


def _read_only(tree):
    import os
    import stat

    for folder, _, files in os.walk(tree):
        for name in [*files, "."]:
            path = os.path.join(folder, name)
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o222)


def _made_files(tree):
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.suffix in (".db", ".lock"))


@pytest.mark.parametrize(
    "command",
    [
        ("freeze", "--op", OP, "--soc", "cpu", "--force"),
        ("run", "--op", OP, "--soc", "cpu", "--shape", "B=3,max_seq_len=20,D=8", "--trials", "2"),
    ],
)
def test_a_read_only_checkout_makes_no_database_and_no_lock(tree, command):
    _read_only(tree)
    try:
        result = autotune_cli(*command, cwd=tree, env={"AUTOTUNE_DB": "sqlite:///autotune.db"})
        one_error_line(result, "nothing written", "not writable")
        assert _made_files(tree) == []
    finally:
        for path in [tree, *tree.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


def test_freeze_into_a_read_only_checkout_takes_no_lock(tree, tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'elsewhere.db'}"
    run = autotune_cli(
        "run",
        "--op",
        OP,
        "--soc",
        "cpu",
        "--trials",
        "2",
        "--quiet",
        "--db",
        url,
        "--case",
        "b1_n8_d16_fp32",
        cwd=tree,
    )
    assert run.returncode == 0, run.stderr
    _read_only(tree)
    try:
        result = autotune_cli(
            "freeze", "--op", OP, "--soc", "cpu", "--force", "--db", url, cwd=tree
        )
        one_error_line(result, "nothing written", "not writable")
        assert _made_files(tree) == []
    finally:
        for path in [tree, *tree.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


def test_log_ticks_read_as_1_2_5():
    from api.plots import log_ticks

    assert log_ticks([0.04, 1.0, 22.0]) == (
        [0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0],
        ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"],
    )
    assert log_ticks([0.9, 1.0, 1.7])[1] == ["0.5", "1", "2"]


@pytest.mark.skipif(
    not (__import__("pathlib").Path("/usr/bin/chromium").exists()
         and __import__("pathlib").Path("/usr/bin/chromedriver").exists()),
    reason="needs Chromium at /usr/bin/chromium and chromedriver at /usr/bin/chromedriver",
)  # fmt: skip
def test_the_home_chart_and_table_are_legible_at_1400_px(tmp_path):
    """The checkout's H200 results over an empty database, in a 1400 px window: the op labels
    of the chart and its legend do not overlap, the log axis reads 0.1, 0.2, 0.5, 1, 2, ..., and
    the table's last column is inside the window, on the home and an op page."""
    from api.main import create_app

    from .test_dashboard_browser import _chrome, _serve

    server, base = _serve(create_app(f"sqlite:///{tmp_path / 'home.db'}"))
    driver = _chrome(javascript=True)
    try:
        for page in ("/", f"/ops/{OP}"):
            driver.get(base + page)
            right, window = driver.execute_script(
                "const th = document.querySelectorAll('table.cases th');"
                "return [th[th.length - 1].getBoundingClientRect().right,"
                " document.documentElement.clientWidth];"
            )
            assert right <= window, page
        driver.get(base + "/")
        boxes = driver.execute_script(
            "const box = e => { const r = e.getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom, e.textContent]; };"
            "const chart = document.getElementById('overview-chart');"
            "return { y: [...chart.querySelectorAll('.ytick text')].map(box),"
            " x: [...chart.querySelectorAll('.xtick text')].map(box),"
            " legend: [...chart.querySelectorAll('.legend .traces')].map(box) };"
        )
    finally:
        driver.quit()
        server.should_exit = True

    def overlap(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    labels = boxes["y"]
    assert len(labels) >= 20 and any(f"{OP} (H200)" == label[4] for label in labels)
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
    assert not [(a[4], b[4]) for a, b in pairs if overlap(a, b)]
    assert not [(a[4], b[4]) for a in labels for b in boxes["legend"] if overlap(a, b)]
    ticks = [t[4] for t in boxes["x"]]
    assert {"0.1", "0.2", "0.5", "1", "2", "5", "10"} <= set(ticks), ticks
    assert all(float(t) == float(f"{float(t):.0e}") for t in ticks), ticks  # 1, 2 or 5 x 10^k

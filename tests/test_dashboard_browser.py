"""The dashboard in a real headless Chromium: tables match the database (times, roofline,
accuracy), charts render (the overview's and the studies'), no errors."""

import re
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy import select

from api.formatting import ms
from api.main import create_app
from autotuner.baseline.baseline import gpu_baseline
from ops import all_ops
from storage import FrozenVersion, open_database
from tests.dashboard_seed import (
    ACCURACY,
    ACCURACY_FAILURES,
    CASE_A,
    CASE_VERIFIED,
    EXPECTED,
    FLASH,
    JTPD,
    LEGACY,
    REGRESSED,
    seed,
)

from .conftest import DATABASES, empty_database
from .test_frozen_h200 import NOT_STARTED

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason=f"needs Chromium at {CHROMIUM} and chromedriver at {CHROMEDRIVER}",
)


@pytest.fixture(scope="module")
def seeded(module_db):
    """The seeded database, on SQLite and on PostgreSQL."""
    return seed(module_db)


def _serve(app) -> tuple[uvicorn.Server, str]:
    """The app under uvicorn in a thread, on a port the OS picked."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(scope="module")
def base_url(seeded):
    """The seeded database only (the checkout's frozen results left out)."""
    server, base = _serve(create_app(seeded.url, repository=False))
    yield base
    server.should_exit = True


def _chrome(javascript: bool):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1400,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _chrome(javascript=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def browser_without_js():
    driver = _chrome(javascript=False)
    yield driver
    driver.quit()


def _table(driver) -> dict[tuple, dict[str, object]]:
    """(op, soc, case, part) -> data-col -> the cell element, of the page's cases table."""
    from selenium.webdriver.common.by import By

    rows = {}
    for tr in driver.find_elements(By.CSS_SELECTOR, "table.cases tbody tr"):
        key = tuple(tr.get_attribute(f"data-{a}") for a in ("op", "soc", "case", "part"))
        cells = tr.find_elements(By.CSS_SELECTOR, "td[data-col]")
        rows[key] = {td.get_attribute("data-col"): td for td in cells}
    return rows


def _severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_overview_cells_match_the_database(browser, base_url, seeded):
    browser.get(f"{base_url}/")
    rows = _table(browser)
    assert set(EXPECTED) <= set(rows)
    db = open_database(seeded.url)
    with db.sessions() as session:
        for (op, soc, case, part), (frozen, gpu, _, _) in EXPECTED.items():
            cells = rows[(op, soc, case, part)]
            newest = session.scalars(
                select(FrozenVersion)
                .where(FrozenVersion.op == op, FrozenVersion.soc == soc)
                .order_by(FrozenVersion.id.desc())
            ).first()
            if part == "fwd":  # a one-kernel part: its frozen entry's time, as stored
                assert newest.entries[f"fwd {case}"]["median_ms"] == frozen
            text = cells["frozen_ms"].text
            assert text == (f"{ms(frozen)} (interpreter)" if soc == "cpu" else ms(frozen))
            upstream = gpu_baseline(session, op, case, part, None)  # newest GPU timing
            if soc != "cpu" and upstream is not None:
                assert cells["gpu_baseline_ms"].text == ms(upstream.median_ms)
            assert cells["gpu_baseline_ms"].text == ms(gpu)
    db.engine.dispose()
    assert rows[REGRESSED]["check"].text == "regressed +8.1%"
    assert "bad" in rows[REGRESSED]["check"].get_attribute("class")
    beats = rows[(JTPD, "H200", CASE_A, "fwd")]
    assert "good" in beats["ratio_to_gpu"].get_attribute("class")  # 0.952 of the GPU's time
    assert "interp" in rows[(JTPD, "cpu", "b1_n8_d16_fp32", "fwd")]["frozen_ms"].get_attribute(
        "class"
    )
    for (op, soc, case, _), cells in rows.items():  # the newest verdicts of each case
        want = ACCURACY.get((op, soc, case), "-")
        assert cells["accuracy"].text == want, (op, soc, case)
        if want != "-":
            assert ("good" if want == "pass" else "bad") in cells["accuracy"].get_attribute("class")
    assert rows[(JTPD, "H200", CASE_VERIFIED, "-")]["frozen_ms"].text == "-"  # verdicts only
    assert "MERE ratio 2.5 > 2" in rows[REGRESSED]["accuracy"].get_attribute("title")
    roofline = rows[(JTPD, "H200", CASE_A, "fwd")]["roofline"]
    spec = all_ops()[JTPD]
    moved, _ = spec.traffic(spec.case(CASE_A), "fwd")
    assert roofline.text == f"{moved / 0.02903e-3 / 4.27e12:.0%}"  # of the seeded H200 ceilings
    assert roofline.get_attribute("title").startswith("memory-bound")
    assert rows[(FLASH, "910B", "b1024_n256_d128_t128_bf16", "fwd")]["roofline"].text == "-"
    assert _severe(browser) == []


def test_overview_chart_shows_each_op_speedup_and_gpu_ratio(browser, base_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{base_url}/")
    chart = browser.find_element(By.CSS_SELECTOR, "div.chart.overview")
    WebDriverWait(browser, 30).until(
        lambda _: chart.find_elements(By.CSS_SELECTOR, ".plot-container .main-svg")
    )
    assert chart.size["height"] > 200 and chart.size["width"] > 600
    traces = chart.find_elements(By.CSS_SELECTOR, "g.trace.bars")
    assert len(traces) == 2  # speedup over the default, frozen / GPU
    bars = [len(t.find_elements(By.CSS_SELECTOR, "g.point path")) for t in traces]
    assert bars == [3, 3]  # three (op, soc), interpreter rows left out
    ticks = {t.text for t in chart.find_elements(By.CSS_SELECTOR, "g.ytick text")}  # one row an op
    assert ticks == {f"{JTPD} (H200)", f"{FLASH} (910B)", f"{LEGACY} (A100)"}
    legend = chart.find_element(By.CSS_SELECTOR, "g.legend").text
    assert "speedup over the default" in legend and "frozen / GPU baseline" in legend
    assert _severe(browser) == []


def test_regressions_lists_accuracy_failures(browser, base_url):
    from selenium.webdriver.common.by import By

    browser.get(f"{base_url}/regressions")
    failures = browser.find_elements(By.CSS_SELECTOR, "table.accuracy tbody tr")
    found = {tuple(tr.get_attribute(f"data-{a}") for a in ("op", "soc", "case", "output"))
             for tr in failures}  # fmt: skip
    assert found == ACCURACY_FAILURES
    assert browser.find_elements(By.CSS_SELECTOR, "table.checks tbody tr.bad")
    assert _severe(browser) == []


def test_op_page_draws_its_charts(browser, base_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{base_url}/ops/{JTPD}")
    charts = browser.find_elements(By.CSS_SELECTOR, "div.chart")
    assert len(charts) == 3  # two histories, one importance plot

    def drawn(_driver) -> bool:
        return all(
            chart.find_elements(By.CSS_SELECTOR, ".plot-container .main-svg") for chart in charts
        )

    WebDriverWait(browser, 30).until(drawn)
    assert all(chart.size["height"] > 100 for chart in charts)
    assert set(_table(browser)) == {k for k in EXPECTED if k[0] == JTPD} | {
        (JTPD, "H200", CASE_VERIFIED, "-")
    }
    assert _severe(browser) == []


def test_overview_without_javascript(browser_without_js, base_url):
    from selenium.webdriver.common.by import By

    browser_without_js.get(f"{base_url}/")
    rows = _table(browser_without_js)
    assert set(EXPECTED) <= set(rows)
    assert rows[(JTPD, "H200", CASE_A, "fwd")]["frozen_ms"].text == ms(0.02903)
    assert rows[REGRESSED]["accuracy"].text == "FAIL 1 of 1"  # the column needs no script
    assert browser_without_js.find_element(By.CSS_SELECTOR, "div.chart.overview")
    assert not browser_without_js.find_elements(By.CSS_SELECTOR, ".plot-container")
    browser_without_js.get(f"{base_url}/ops/{JTPD}")  # scripts really are off: no chart drawn
    assert browser_without_js.find_elements(By.CSS_SELECTOR, "div.chart")
    assert not browser_without_js.find_elements(By.CSS_SELECTOR, ".plot-container")


@pytest.fixture(scope="module", params=DATABASES)
def fresh_clone_url(request, tmp_path_factory):
    """The app over an empty database in this checkout, as on a fresh clone."""
    with empty_database(request.param, tmp_path_factory.mktemp("fresh")) as url:
        server, base = _serve(create_app(url))
        yield base
        server.should_exit = True


def test_fresh_clone_shows_the_frozen_h200_results(browser, fresh_clone_url):
    from autotuner.atk.performance_json import frozen_sections, read
    from core.paths import performance_json

    browser.get(f"{fresh_clone_url}/")
    overview = _table(browser)
    for op in (op for op in all_ops() if op not in NOT_STARTED):
        frozen = {
            case: section
            for case, by_soc in frozen_sections(read(performance_json(op))).items()
            if (section := by_soc.get("H200"))
        }
        assert frozen, op
        on_overview = {k[2] for k in overview if k[0] == op and k[1] == "H200"}
        assert on_overview == set(frozen), op
        browser.get(f"{fresh_clone_url}/ops/{op}")
        rows = _table(browser)
        for case, section in frozen.items():
            cells = next(c for k, c in rows.items() if k[1] == "H200" and k[2] == case)
            source = f"from the repository (frozen at {section['date']}, {section['label']})"
            assert cells["source"].text == source
        assert _severe(browser) == []


@pytest.fixture(scope="module", params=DATABASES)
def cpu_run(request, tmp_path_factory):
    """A real `cpu` run of one small study (the interpreter), served: (base URL, study id)."""
    from autotuner.search import runner
    from autotuner.search.request import RunRequest

    with empty_database(request.param, tmp_path_factory.mktemp("cpu_run")) as url:
        (record,) = runner.run(
            RunRequest(
                "dense_to_jagged",
                "cpu",
                cases=["b1_n8_d16_bf16"],
                trials=4,
                db_url=url,
                timeout_s=120,
            )
        )
        server, base = _serve(create_app(url, repository=False))
        yield base, record.id
        server.should_exit = True


def test_trial_table_filters_after_a_cpu_run(browser, browser_without_js, cpu_run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    base, study_id = cpu_run

    def rows(driver) -> list[tuple[str, str]]:
        found = driver.find_elements(By.CSS_SELECTOR, "table.trials tbody tr")
        return [(tr.get_attribute("data-state"), tr.get_attribute("data-category")) for tr in found]

    browser.get(f"{base}/studies/{study_id}")
    every = rows(browser)
    assert ("COMPLETE", "") in every and ("FAIL", "infeasible") in every
    Select(browser.find_element(By.NAME, "category")).select_by_visible_text("infeasible")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    WebDriverWait(browser, 10).until(  # the filtered page, not the old one's rows
        lambda d: (
            "category=infeasible" in d.current_url
            and d.execute_script("return document.readyState") == "complete"
        )
    )
    infeasible = rows(browser)
    assert infeasible and set(infeasible) == {("FAIL", "infeasible")}
    total = int(re.search(r"(\d+) trials failed with infeasible", browser.page_source)[1])
    assert len(infeasible) == min(total, 100)  # one page of 100 at most
    assert "category=infeasible" in browser.current_url
    assert _severe(browser) == []
    browser_without_js.get(f"{base}/studies/{study_id}")  # the filter links need no script
    browser_without_js.find_element(By.LINK_TEXT, "complete").click()
    assert set(rows(browser_without_js)) == {("COMPLETE", "")}
    browser_without_js.find_element(By.CSS_SELECTOR, "table.trials tbody tr td a").click()
    assert "Trial " in browser_without_js.find_element(By.TAG_NAME, "h1").text

"""kafkatool report in a real headless browser (Debian's chromium and chromedriver, nothing downloaded): the
page renders without console errors, makes no request but its own file:// load, has no script, shows each
section and figure for the acceptance cases, prints to PDF, and leaves a screenshot as a test artifact
(in ``$KAFKATOOL_ARTIFACTS`` when set, else the test's temporary directory).

Skipped when chromium, its driver or selenium is missing; under CI that is a failure, as for ../shared.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, shared_dir
from tests.report_support import make_report

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--window-size=1280,1000")


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: the browser tests must run; .ci/run installs chromium)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        _missing("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed (pip install -e '.[test]')")
    profile = tempfile.mkdtemp(prefix="kafkatool-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _artifacts(tmp_path: Path) -> Path:
    where = os.environ.get("KAFKATOOL_ARTIFACTS")
    out = Path(where) if where else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    return out


def open_offline(driver: Any, page: Path) -> tuple[list[str], list[dict], list[dict]]:
    """Load ``page`` after a blank page, flushing earlier logs: the URLs requested, the console entries and
    the failed loads."""
    driver.get("about:blank")
    driver.get_log("performance")
    driver.get_log("browser")
    driver.get(page.as_uri())
    driver.execute_script("return document.readyState")
    requests, failures = [], []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
        elif message["method"] == "Network.loadingFailed":
            failures.append(message["params"])
    return requests, driver.get_log("browser"), failures


def check_page(driver: Any, page: Path, shot: Path, *, partitions: int, replicas: int) -> dict:
    requests, console, failures = open_offline(driver, page)
    assert not failures, failures
    assert requests == [page.as_uri()], f"requests beyond the page itself: {requests}"
    assert [e for e in console if e["level"] in ("SEVERE", "WARNING")] == [], console
    found = driver.execute_script("""
        const box = e => { const r = e.getBoundingClientRect(); return r.width > 50 && r.height > 50; };
        const figs = [...document.querySelectorAll('figure')].map(f => ({
            kind: f.classList[0], empty: f.classList.contains('empty'),
            sentence: (f.querySelector('p.empty') || {}).textContent || '',
            svg: !!f.querySelector('svg[role=img]') && box(f.querySelector('svg')),
            alt: (document.getElementById(f.querySelector('svg')?.getAttribute('aria-labelledby') || '') || {})
                 .textContent || '',
            command: (f.querySelector('pre.cmd') || {}).textContent || ''}));
        return {scripts: document.scripts.length, figs: figs,
                verdict: document.getElementById('verdict').innerText,
                level: document.getElementById('verdict').dataset.level,
                partitions: document.querySelectorAll('section.partition').length,
                replicas: document.querySelectorAll('section.replica-set').length,
                findings: !!document.getElementById('findings'), reproduce: !!document.getElementById('reproduce'),
                height: document.documentElement.scrollHeight};""")
    assert found["scripts"] == 0
    assert found["partitions"] == partitions and found["replicas"] == replicas
    assert found["findings"] and found["reproduce"]
    kinds = [f["kind"] for f in found["figs"]]
    for kind in ("segment-map", "epochs", "producers"):
        assert kinds.count(kind) == partitions, kinds
    assert kinds.count("replicas") == replicas
    for f in found["figs"]:
        assert f["command"].startswith("kafkatool "), f
        if f["empty"]:  # a chart with nothing on it is a sentence instead
            assert not f["svg"] and len(f["sentence"]) > 40, f
            continue
        assert f["svg"], f"{f['kind']}: no visible SVG"
        assert f["alt"].startswith("Text alternative:") and len(f["alt"]) > 40, f
    pdf = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})
    assert base64.b64decode(pdf["data"])[:5] == b"%PDF-"
    driver.set_window_size(1280, min(found["height"], 16000))
    driver.save_screenshot(str(shot))
    driver.set_window_size(1280, 1000)
    assert shot.stat().st_size > 20000
    return found


def test_torn_write_report_in_the_browser(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "idem-torn-write.html"
    make_report(out, shared_dir("corpus") / "idem-torn-write" / "input")
    found = check_page(browser, out, _artifacts(tmp_path) / "report-idem-torn-write.png", partitions=1, replicas=0)
    assert found["level"] == "loses-data"
    assert "truncates the log at offset 404" in found["verdict"]
    assert "offsets 404 to 411 were acknowledged" in found["verdict"]


def test_txn_clean_report_in_the_browser(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "txn-clean.html"
    make_report(out, shared_dir("corpus") / "txn-clean" / "input", extra=("--now", "1700000002200"))
    found = check_page(browser, out, _artifacts(tmp_path) / "report-txn-clean.png", partitions=1, replicas=0)
    assert found["level"] == "healthy"


def test_kip101_report_in_the_browser(browser: Any, tmp_path: Path) -> None:
    root = shared_dir("replica-sets") / "kip101-divergence-after-double-crash" / "brokers"
    out = tmp_path / "kip101.html"
    make_report(out, root / "1", root / "2", root / "3", extra=("--isr", "2"))
    found = check_page(browser, out, _artifacts(tmp_path) / "report-kip101.png", partitions=3, replicas=1)
    assert found["level"] == "loses-data"
    assert "broker 1 diverged from leader 2 at offset 225" in found["verdict"]


def test_fixture_report_in_the_browser(browser: Any, tmp_path: Path) -> None:
    """Without ../shared: the committed torn-write fixture."""
    out = tmp_path / "fixture.html"
    make_report(out, REPO / "fixtures" / "torn-write")
    check_page(browser, out, _artifacts(tmp_path) / "report-fixture-torn-write.png", partitions=1, replicas=0)


def test_the_harness_sees_requests_and_console_errors(browser: Any, tmp_path: Path) -> None:
    """The checks above can fail: a page fetching an image and logging an error is caught by both."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png">'
                    '<script>console.error("boom")</script></body></html>')
    requests, console, failures = open_offline(browser, page)
    assert failures
    assert any(u.startswith("http://127.0.0.1:9/") for u in requests)
    assert any(e["level"] == "SEVERE" for e in console)

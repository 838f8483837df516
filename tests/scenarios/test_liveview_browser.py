"""The live view in a real headless browser (Debian's Chromium, driven by selenium) on a
running Mininet fabric (root).

A stream runs on leafspine:2,2,1 with `fabriclab run`'s live view on a free port; the
page must show every switch and every cable; the scenario then fails a leaf-spine link,
and the page must draw it as a failed link within 3 s of the fault (the fault's own
start time, from the run's metrics). A screenshot is kept in the run's result directory
(`liveview.png`, linked from the report), and the replay the report links to, opened
from the file system, ends with the same failed link.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import run
from fabriclab.view import ViewOptions
from topologies.targets import resolve

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FAILED = "s1-s3"  # s1:2 - s3:1 on leafspine:2,2,1
FAULT_AT_S = 8.0  # after traffic starts: the page is loaded and checked by then
SEEN_WITHIN_S = 3.0


def _browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("needs Debian's chromium and chromium-driver (scripts/setup.sh)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("needs selenium (python3-selenium, scripts/setup.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                "--disable-dev-shm-usage", "--allow-file-access-from-files"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scenario():
    data = sc.load("stream").as_dict()
    data.update(topology="leafspine:2,2,1", flow_control="lossy", duration_s=25,
                reroute="fast", faults=[{"at_s": FAULT_AT_S, "kind": "link_down",
                                         "target": FAILED}])
    data["traffic"] = {**data["traffic"], "frames": 5000, "rate_pps": 300}  # ~17 s of traffic
    data["checks"] = {**data.get("checks", {}), "unknown_dlid_frames": 0}
    return sc.parse(data, "liveview browser test")


def _until(condition, timeout: float, what: str, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"{what}: not within {timeout:g} s")


def _page_shows_the_fabric(driver, fabric: dict) -> None:
    """Every switch, host and cable is drawn, inside the visible graph."""
    drawn = driver.execute_script("""
        const cy = window.fabriclabView.cy, box = cy.extent();
        const inside = e => { const b = e.boundingBox();
            return b.x1 >= box.x1 - 1 && b.x2 <= box.x2 + 1 && b.y1 >= box.y1 - 1 && b.y2 <= box.y2 + 1; };
        return {nodes: cy.nodes().filter(n => n.visible() && inside(n)).map(n => n.id()),
                edges: cy.edges().filter(e => e.visible() && inside(e)).map(e => e.id()),
                switches: cy.nodes("[kind = 'switch']").map(n => n.id())};""")
    assert sorted(drawn["switches"]) == sorted(n["id"] for n in fabric["nodes"]
                                               if n["kind"] == "switch")
    assert sorted(drawn["nodes"]) == sorted(n["id"] for n in fabric["nodes"])
    assert sorted(drawn["edges"]) == sorted(lk["id"] for lk in fabric["links"])


def _watch(driver, url: str, results: Path, seen: dict) -> None:
    """The browser's side, beside the run: the page of the running fabric, then the failed
    link; what it saw goes into `seen` (an AssertionError as seen["error"])."""
    try:
        def served():
            try:
                with urllib.request.urlopen(url + "api/snapshot", timeout=2) as answer:
                    return json.loads(answer.read()).get("seq", 0) >= 1
            except OSError:
                return False

        _until(served, 180, "the live view's first sample")
        with urllib.request.urlopen(url + "api/fabric", timeout=5) as answer:
            seen["fabric"] = fabric = json.loads(answer.read())
        driver.get(url)
        _until(lambda: driver.execute_script(
            "return window.fabriclabView && window.fabriclabView.cy && "
            "window.fabriclabView.snapshot() !== null"), 20, "the page's first snapshot")
        _page_shows_the_fabric(driver, fabric)
        assert driver.execute_script("return window.fabriclabView.failedLinks()") == [], \
            "a link was already drawn failed before the fault (raise FAULT_AT_S?)"
        seen["checked_before_fault_ns"] = time.time_ns()
        failed = _until(lambda: driver.execute_script(
            "return window.fabriclabView.failedLinks()"), 60, "a failed link on the page",
            step=0.05)
        seen["failed_ns"] = time.time_ns()
        assert failed == ["s1:2-s3:1"]
        colour = driver.execute_script(
            "return window.fabriclabView.cy.getElementById('s1:2-s3:1').style('line-color')")
        assert colour == "rgb(207,34,46)"  # the legend's red
        listed = driver.find_elements("css selector", "#problems li[data-failed-link]")
        assert [li.get_attribute("data-failed-link") for li in listed] == ["s1:2-s3:1"]
        time.sleep(1.5)  # a sample or two more: the SM's own reroute event is listed too
        driver.save_screenshot(str(next(results.iterdir()) / "liveview.png"))
    except BaseException as exc:  # noqa: BLE001 -- raised again by the test
        seen["error"] = exc


def test_the_live_view_shows_the_fabric_and_a_failed_link_within_3_s(tmp_path):
    driver = _browser()
    port = _free_port()
    results = tmp_path / "results"
    seen: dict = {}
    watcher = threading.Thread(target=_watch, name="browser", daemon=True,
                               args=(driver, f"http://127.0.0.1:{port}/", results, seen))
    watcher.start()
    try:
        result = run(_scenario(), resolve("embedded"), results, view=ViewOptions(web_port=port))
        watcher.join(timeout=60)
        if "error" in seen:
            raise seen["error"]
        assert not watcher.is_alive(), "the browser was still waiting after the run"
        assert result.metrics.error is None, result.metrics.error
        faults = [f for f in result.metrics.faults if f.name.startswith("link_down")]
        assert len(faults) == 1 and faults[0].started_ns, result.metrics.faults
        assert seen["checked_before_fault_ns"] < faults[0].started_ns
        delay_s = (seen["failed_ns"] - faults[0].started_ns) / 1e9
        print(f"\nlink down -> drawn failed in the browser: {delay_s:.2f} s")
        assert 0 < delay_s < SEEN_WITHIN_S
        run_dir = result.run_dir
        assert (run_dir / "liveview.png").stat().st_size > 10_000
        report = (run_dir / "report.html").read_text()
        assert "liveview/index.html" in report and "liveview.png" in report

        driver.get((run_dir / "liveview" / "index.html").resolve().as_uri())
        _until(lambda: driver.execute_script(
            "return window.fabriclabView && window.fabriclabView.show !== undefined"), 20,
            "the replay page")
        assert driver.execute_script("return window.fabriclabView.mode") == "replay"
        _page_shows_the_fabric(driver, seen["fabric"])
        assert driver.execute_script("return window.fabriclabView.failedLinks()") == []
        last = driver.execute_script(
            "window.fabriclabView.show(1e9); return window.fabriclabView.snapshot().seq")
        assert last >= 10
        assert driver.execute_script("return window.fabriclabView.failedLinks()") == \
            ["s1:2-s3:1"]
        events = driver.find_element("id", "events").text
        assert "link s1:2-s3:1 down" in events and "fast reroute switchover" in events
        driver.save_screenshot(str(run_dir / "liveview-replay.png"))
        print(f"screenshots: {run_dir / 'liveview.png'}, {run_dir / 'liveview-replay.png'}")
        _keep(run_dir)
    finally:
        driver.quit()


def _keep(run_dir: Path) -> None:
    """The run's results outside pytest's temporary directory, for a person to look at."""
    keep = Path(__file__).resolve().parents[2] / "results" / "tests" / run_dir.name
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(run_dir, keep, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("pcaps", "nics"))

"""The rendered report in a real browser: headless Chromium, no network.

Checks: no console errors, every chart container holds a drawn plot, every section is present.
Saves a full-page screenshot to tests/artifacts/report.png. Skips (saying why) when Chromium,
chromedriver or selenium is missing; CI installs Debian's `chromium` and `chromium-driver`.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
from runfactory import sample_run

from profiler.render import html

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
SECTIONS = (
    "run",
    "staged-table",
    "time-chart",
    "breakdown",
    "stage-tables",
    "timeline",
    "amdahl",
    "advice",
    "roofline",
    "batch-sweep",
    "regressions",
)
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def _driver(profile: Path):  # type: ignore[no-untyped-def]
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    from selenium.webdriver.chrome.service import Service

    browser = next((shutil.which(b) for b in CHROMIUM if shutil.which(b)), None)
    driver_bin = shutil.which("chromedriver")
    if browser is None or driver_bin is None:
        pytest.skip("needs chromium and chromedriver (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--proxy-server=http://127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(driver_bin))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*", "wss://*"]}
    )
    return driver


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("browser")
    report = html.write_report(sample_run(), tmp / "report.html")
    figures = report.read_text().count('class="plotly-graph-div"')
    driver = _driver(tmp / "profile")
    try:
        driver.get(report.as_uri())
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 60).until(
            lambda d: (
                d.execute_script("return document.body.getAttribute('data-charts')") is not None
            )
        )
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script(
                "return [...document.querySelectorAll('div.chart')].every("
                "c => c.querySelector('.js-plotly-plot svg.main-svg'))"
            )
        )
        driver.figures = figures  # how many charts the page must draw
        yield driver
    finally:
        driver.quit()


def test_charts_are_drawn(page) -> None:  # type: ignore[no-untyped-def]
    assert page.execute_script("return document.body.getAttribute('data-charts')") == "ready"
    containers = page.execute_script(
        "return [...document.querySelectorAll('div.chart')].map(c => c.id)"
    )
    drawn = page.execute_script(
        "return [...document.querySelectorAll('div.chart')]"
        ".filter(c => c.querySelector('.js-plotly-plot svg.main-svg')).map(c => c.id)"
    )
    assert len(containers) == page.figures >= 6
    assert drawn == containers


def test_every_section_present(page) -> None:  # type: ignore[no-untyped-def]
    missing = [
        s for s in SECTIONS if not page.execute_script(f"return !!document.getElementById('{s}')")
    ]
    assert missing == []


def test_no_console_errors_and_no_network(page) -> None:  # type: ignore[no-untyped-def]
    severe = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []
    requested = page.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => !n.startsWith('file:') && !n.startsWith('data:') && !n.startsWith('blob:'))"
    )
    assert requested == []


def test_screenshot(page) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    size = page.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = page.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        },
    )
    path = ARTIFACTS / "report.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.stat().st_size > 10_000

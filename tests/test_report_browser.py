"""Rendered reports in a real browser: headless Chromium, no network.

Seven runs: the H100 LeNet runs of schema 1 (`tests/data/runs/lenet-h100-schema1-cupti`, and its
sibling with Nsight Compute metrics: the roofline, an ERROR stage), the committed samples of
today's schema (`reports/sample-lenet-h100-metrics`, `reports/sample-softmax-h100-cupti`,
`reports/sample-mobilenetv2-h100`: a range per ONNX node, the per-layer section), the
fixture-built run (every section) and that run made hostile (titles, kernel, range and stage names
holding HTML links, plotly markup and escape codes). For each: no console errors, every chart
container holds a drawn plot, every section the run has data for is present (derived from the
run's tables) and none other, the absolute breakdown's log button works, no run text became a
link or a tag in a chart, the staged table is one line a stage with the technique a click away,
the roofline's numbers do not overlap, and a full-page screenshot is saved to
tests/artifacts/report-<name>.png. Skips (saying why) when Chromium, chromedriver or selenium is
missing; CI installs Debian's `chromium` and `chromium-driver`.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hostile import ANSI, HTML, PLOTLY, edited, rekey, rename_kernel, rename_range, retitle
from runfactory import METRICS_RUN, SAMPLE_RUN, build_run

from profiler import importer, store
from profiler.render import html
from profiler.store import Run

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
REQUIRE_BROWSER = "PROFGEN_REQUIRE_BROWSER"  # set by tox: no browser is a failure
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def hostile_run() -> Run:
    """The fixture-built run with run text a chart must not read as HTML."""
    return edited(
        build_run(),
        [
            retitle("overlap_fusion", HTML),
            retitle("cuda_baseline", PLOTLY + ANSI),
            rename_kernel("scale", HTML),
            rename_kernel("relu", PLOTLY),
            rename_range("compute", HTML),
            rekey("pinned", '<a href="javascript:alert(5)">pinned</a>'),
        ],
    )


REPORTS = SAMPLE_RUN.parents[3] / "reports"
NCU_2022 = Path(__file__).parent / "data" / "ncu" / "2022.x"
RUNS = {
    "schema1-lenet-h100-cupti": lambda: store.load_run(SAMPLE_RUN),
    "schema1-lenet-h100-metrics": lambda: store.load_run(METRICS_RUN),
    "sample-lenet-h100-metrics": lambda: store.load_run(REPORTS / "sample-lenet-h100-metrics"),
    "sample-softmax-h100-cupti": lambda: store.load_run(REPORTS / "sample-softmax-h100-cupti"),
    "sample-mobilenetv2-h100": lambda: store.load_run(REPORTS / "sample-mobilenetv2-h100"),
    "fixture": build_run,
    "hostile": hostile_run,
    "imported-counters": lambda: imported_counters_run(),
}


def imported_counters_run() -> Run:
    """Real ncu and nvprof metric files imported: the counters section's grids (ncu's details
    page by section, its raw page, nvprof events), beside a roofline (the raw page) and a
    breakdown (an nvprof summary), as a user's import of several files has them."""
    from profiler.importer import import_run

    data = Path(__file__).parent / "data"
    stages = [
        ("ncu", str(data / "ncu" / "2025.3.1" / "details-sections.csv")),
        ("ncu_raw", str(data / "ncu" / "2025.3.1" / "raw-metrics.csv")),
        ("events", str(data / "nvprof" / "9.x" / "minmax-tegra-x1-events.log")),
        ("summary", str(data / "nvprof" / "9.x" / "cuda-stream-summary.txt")),
    ]
    return store.load_run(import_run("m", stages, {}, Path(tempfile.mkdtemp(prefix="profgen-"))))


def expected_sections(run: Run) -> list[str]:
    """The sections a run's tables call for, in page order."""
    always = ["run", "staged-table", "time-chart", "breakdown", "stage-tables", "timeline"]
    optional = [("metrics", "roofline"), ("counters", "counters"), ("batch_sweep", "batch-sweep")]
    optional.append(("regressions", "regressions"))
    present = [s for t, s in optional if run.has(t)]
    if node_ranges(run) >= 20:  # a network of many layers: the per-layer section
        present.insert(int(run.has("metrics")), "layers")
    amdahl = ["amdahl"] + (["phase-amdahl"] if phase_stages(run) >= 2 else [])
    return always + amdahl + ["advice"] + present


def phase_stages(run: Run) -> int:
    """How many stages of the study's own (PASS, not a framework) name at least two phases
    besides the copies, run one after another (their GPU time sums within 1% of the stage
    range's): Amdahl by phase needs two."""
    ranges, stages = run.table("ranges"), run.table("stages")
    model = run.meta.get("model")
    count = 0
    for stage in stages.loc[(stages["status"] == "PASS") & (stages["role"] != "framework"),
                            "stage"]:
        mine = ranges[(ranges["stage"] == stage) & ranges["gpu_total_ns"].notna()]
        own = mine.loc[mine["name"] == f"{model}:{stage}", "gpu_total_ns"]
        phases = mine[~mine["name"].str.contains(":")]
        if own.empty or (~phases["name"].isin(["h2d", "d2h"])).sum() < 2:
            continue
        count += phases["gpu_total_ns"].sum() <= 1.01 * own.iloc[0]
    return count


def node_ranges(run: Run) -> int:
    """How many ranges the first framework stage shares with the study's own stages, copies
    and stage ranges aside."""
    ranges, stages = run.table("ranges"), run.table("stages")
    names = ranges.groupby("stage")["name"].apply(
        lambda s: {n for n in s if ":" not in n and n not in ("h2d", "d2h", "sync")})
    frameworks = [s for s in stages.loc[stages["role"] == "framework", "stage"] if s in names]
    own = [s for s in stages.loc[stages["role"] != "framework", "stage"] if s in names]
    if not frameworks:
        return 0
    return max((len(names[frameworks[0]] & names[s]) for s in own), default=0)


def expected_charts(run: Run) -> list[str]:
    """The chart containers a run's tables call for, in page order."""
    charts = []
    if run.table("stages")["median_ns"].notna().any():
        charts.append("container-stage-times")
    if run.has("gpu_activities") or run.has("gpu_trace"):
        charts += ["container-breakdown-share", "container-breakdown-abs"]
    if run.has("gpu_trace"):
        charts.append("container-timeline")
    tables = (("metrics", "roofline"), ("batch_sweep", "batch-sweep"))
    return charts + [f"container-{c}" for t, c in tables if run.has(t)]


def _driver(profile: Path):  # type: ignore[no-untyped-def]
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    from selenium.webdriver.chrome.service import Service

    browser = next((shutil.which(b) for b in CHROMIUM if shutil.which(b)), None)
    driver_bin = shutil.which("chromedriver")
    if browser is None or driver_bin is None:
        why = "needs chromium and chromedriver (apt-get install chromium chromium-driver)"
        if os.environ.get(REQUIRE_BROWSER) == "1":  # tox sets it: a missing browser fails
            pytest.fail(why + f"; ${REQUIRE_BROWSER}=1 makes that a failure, not a skip")
        pytest.skip(why)
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
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    d = _driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module", params=list(RUNS))
def page(request: pytest.FixtureRequest, driver: Any, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The run's report, loaded and drawn; the page's console log taken once, as loaded."""
    from selenium.webdriver.support.ui import WebDriverWait

    name = request.param
    run = RUNS[name]()
    report = html.write_report(run, tmp_path_factory.mktemp(name) / "report.html")
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get(report.as_uri())
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.body.getAttribute('data-charts')") is not None
    )
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script(
            "return [...document.querySelectorAll('div.chart')].every("
            "c => c.querySelector('.js-plotly-plot svg.main-svg'))"
        )
    )
    return {"name": name, "run": run, "driver": driver, "log": driver.get_log("browser")}


def test_charts_are_drawn(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    assert d.execute_script("return document.body.getAttribute('data-charts')") == "ready"
    containers = d.execute_script(
        "return [...document.querySelectorAll('div.chart')].map(c => c.id)"
    )
    drawn = d.execute_script(
        "return [...document.querySelectorAll('div.chart')]"
        ".filter(c => c.querySelector('.js-plotly-plot svg.main-svg')"
        " && c.querySelectorAll('.js-plotly-plot svg.main-svg .trace').length > 0).map(c => c.id)"
    )
    assert containers == expected_charts(page["run"])
    assert drawn == containers


def test_every_section_present(page) -> None:  # type: ignore[no-untyped-def]
    ids = page["driver"].execute_script(
        "return [...document.querySelectorAll('main section')].map(s => s.id)"
    )
    assert ids == expected_sections(page["run"])


def test_no_console_errors_and_no_network(page) -> None:  # type: ignore[no-untyped-def]
    severe = [e for e in page["log"] if e["level"] == "SEVERE"]
    assert severe == []
    requested = page["driver"].execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => !n.startsWith('file:') && !n.startsWith('data:') && !n.startsWith('blob:'))"
    )
    assert requested == []


def test_breakdown_switches_to_a_log_axis(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    axis = "return document.getElementById('chart-breakdown-abs').layout.yaxis.type"
    assert d.execute_script(axis) in ("linear", "-")
    d.execute_script(
        "[...document.querySelectorAll('#chart-breakdown-abs .updatemenu-button')]"
        ".find(b => b.textContent.trim() === 'log')"
        ".dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    assert d.execute_script(axis) == "log"
    assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []
    d.execute_script("Plotly.relayout('chart-breakdown-abs', {'yaxis.type': 'linear'})")


def test_screenshot(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    d.execute_script("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    size = d.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    assert size["width"] <= 1400  # nothing overflows the window sideways
    shot = d.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        },
    )
    path = ARTIFACTS / f"report-{page['name']}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.stat().st_size > 10_000


def test_run_text_is_no_link_or_tag_in_a_chart(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    links = d.execute_script(  # (plotly.js 2 draws its own modebar buttons as `a`)
        "return [...document.querySelectorAll('.js-plotly-plot a:not(.modebar-btn)')]"
        ".map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')"
    )
    assert links == []
    bold = d.execute_script(
        "return [...document.querySelectorAll('.js-plotly-plot text')]"
        ".filter(t => t.querySelector('tspan[style*=\"bold\"]')).map(t => t.textContent)"
    )
    assert not [b for b in bold if "bold" in b]
    if page["name"] == "hostile":  # shown as the text it is
        shown = d.execute_script(
            "return [...document.querySelectorAll('.js-plotly-plot text')].map(t => t.textContent)"
        )
        assert any('<a href="javascript:alert(1)">click</a>' in t for t in shown)
        assert any("<b>bold</b>" in t for t in shown)


def test_staged_table_is_one_line_a_stage(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    heights = d.execute_script(
        "return [...document.querySelectorAll('table.staged tbody tr')]"
        ".map(r => r.getBoundingClientRect().height)"
    )
    line = d.execute_script(
        "return parseFloat(getComputedStyle(document.querySelector('table.staged td')).lineHeight)"
    )
    assert len(heights) == len(page["run"].table("stages")) and max(heights) < 2 * line + 12
    rows = d.execute_script("return document.querySelectorAll('table.staged details').length")
    if not rows:
        return
    opened = d.execute_script(
        "const det = document.querySelector('table.staged details');"
        "const row = det.closest('tr'); const before = row.getBoundingClientRect().height;"
        "det.querySelector('summary').click();"
        "const text = det.querySelector('.technique').getBoundingClientRect();"
        "const after = row.getBoundingClientRect().height; det.open = false;"
        "return [before, after, text.height, text.width];"
    )
    before, after, text_height, text_width = opened
    assert det_open_grows(before, after, text_height) and text_width > 200


def det_open_grows(before: float, after: float, text_height: float) -> bool:
    """Opening a stage shows its technique below its title: the row grows by about the text."""
    return text_height > 10 and after >= before + text_height - 2


def test_roofline_numbers_do_not_overlap(page) -> None:  # type: ignore[no-untyped-def]
    if not page["run"].has("metrics"):
        return
    boxes = page["driver"].execute_script(
        "return [...document.querySelectorAll('#chart-roofline .textpoint text')]"
        ".filter(t => t.textContent).map(t => {const b = t.getBoundingClientRect();"
        " return [t.textContent, b.left, b.top, b.right, b.bottom];})"
    )
    assert boxes
    for i, (a, *ra) in enumerate(boxes):
        for b, *rb in boxes[i + 1 :]:
            w = min(ra[2], rb[2]) - max(ra[0], rb[0])
            h = min(ra[3], rb[3]) - max(ra[1], rb[1])
            assert w <= 1 or h <= 1, (a, b)


def test_layer_tables_sort_and_collapse(page) -> None:  # type: ignore[no-untyped-def]
    d = page["driver"]
    if not d.execute_script("return document.getElementById('layers') !== null"):
        return
    closed = d.execute_script(
        "return [...document.querySelectorAll('#layers details')].every(x => !x.open)")
    assert closed
    find = (  # the column of the stage's own time, headed by its key
        "const t = document.querySelector('#layers-tuned table.sortable');"
        "const i = [...t.querySelectorAll('th')].findIndex(h => h.textContent === 'tuned');"
    )
    column = find + (
        "return [...t.tBodies[0].rows].map(r => parseFloat(r.cells[i].getAttribute('data-v')));"
    )
    before = d.execute_script(column)
    d.execute_script(
        find + "document.getElementById('layers-tuned').open = true;"
        "t.querySelectorAll('th')[i].click();"
    )
    after = d.execute_script(column)
    assert sorted(before, reverse=True) == after != before
    top = d.execute_script(
        "return [...document.querySelectorAll('#layers-tuned tr.top')].map(r => r.rowIndex)")
    assert top == list(range(1, 11))  # the ten slowest, highlighted, now first
    d.execute_script("document.getElementById('layers-tuned').open = false")


def roofline_column(driver: Any, run: Run, report: Path, column: str) -> dict[str, Any]:
    """The roofline table's headings, and its cells under `column` (none: no such heading)."""
    driver.get(html.write_report(run, report).as_uri())
    return dict(
        driver.execute_script(
            "const t = document.querySelector('#roofline table');"
            "const head = [...t.tHead.rows[0].cells].map(c => c.textContent);"
            f"const i = head.indexOf({column!r});"
            "return {head: head, cells: i < 0 ? [] : "
            "[...t.tBodies[0].rows].map(r => r.cells[i].textContent)};"
        )
    )


def test_roofline_names_the_nvtx_ranges_kernels_ran_in(driver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ncu output imported with a user's NVTX range (YKTian-x2b's GCN: every launch in
    `<default domain>` range convLayer, text and --csv): its roofline table says so, 12
    kernels of each stage; a kernel that ran in several ranges names them all (the H100 LeNet
    metrics run); a run with no range has no such column."""
    stages = [
        ("paddle", str(NCU_2022 / "ykt-gcn-paddle-nvtx.txt")),
        ("torch", str(NCU_2022 / "ykt-gcn-torch-nvtx-csv.txt")),
    ]
    gcn = store.load_run(importer.import_run("gcn", stages, {}, tmp_path / "runs"))
    got = roofline_column(driver, gcn, tmp_path / "gcn.html", "NVTX range")
    assert got["head"][:4] == ["#", "Stage", "NVTX range", "Kernel"]
    assert got["cells"] == ["convLayer"] * 24
    lenet = roofline_column(driver, store.load_run(METRICS_RUN), tmp_path / "l.html", "NVTX range")
    assert "conv1, conv2" in lenet["cells"] and "fc1, fc2, fc3" in lenet["cells"]
    gcn.tables["metrics"] = gcn.table("metrics").assign(range=pd.NA).astype({"range": "string"})
    plain = roofline_column(driver, gcn, tmp_path / "plain.html", "NVTX range")
    assert plain["head"][:3] == ["#", "Stage", "Kernel"] and "NVTX range" not in plain["head"]


def test_counter_grids_are_whole_tables(page) -> None:  # type: ignore[no-untyped-def]
    """Each counters grid: a header cell per counter and one per row, and a cell per counter
    in every row (no run text broke a row)."""
    if not page["run"].has("counters"):
        return
    shapes = page["driver"].execute_script(
        "return [...document.querySelectorAll('#counters table.counters')].map(t =>"
        " [t.tHead.rows[0].cells.length, [...t.tBodies[0].rows].map(r => r.cells.length)])"
    )
    assert shapes
    for header, rows in shapes:
        assert rows and all(n == header for n in rows)

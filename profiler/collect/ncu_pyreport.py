"""An Nsight Compute report read with NVIDIA's report reader for Python (`ncu_report`, the
`ncu-report` package on PyPI, or the copy in an Nsight Compute install's `extras/python`), for a
machine without the `ncu` command line tool, or whose `ncu` cannot read the report (ncu 2025.3.1
crashes on a 2019 `.nsight-cuprof-report` that the reader loads).

The reader is native code, and a report can crash it (the copy of ncu 2025.3.1 crashed on a
2025 report on the H100 host), so it runs in a child process of its own
(`python -m profiler.collect.ncu_pyreport REPORT PAGE [NCU]`, `read`): a crash is refused as
one, and never takes profgen down.

The report is written out as the raw page that `ncu --import R --csv --page raw --print-units
base` prints, so that `parse.ncu_csv` reads both alike: the header (`"ID","Process ID",...`,
then every metric the report holds, sorted), the units row, then one row per profiled launch,
its metrics' values in the unit the report stores them in. The cells differ from ncu's only in
how numbers are written (`1168077824` where ncu writes `1,168,077,824`; doubles as Python
writes them).
"""

from __future__ import annotations

import csv
import glob
import importlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from profiler.collect.tools import describe_exit
from profiler.errors import ProfgenError, ToolNotFound

MODULE = "ncu_report"
PACKAGE = "NVIDIA's report reader for Python (`pip install ncu-report`)"
# The launch's own columns, as ncu's raw page names them, and the metrics that fill them.
IDENTITY = ("ID", "Process ID", "Process Name", "Kernel Name", "Block Size", "Grid Size", "CC")
_DIMS = ("launch__block_dim_", "launch__grid_dim_")  # Block Size, Grid Size
_INSTALLS = "/opt/nvidia/nsight-compute/*/ncu"
_CC = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")


def module(ncu: Path | None = None) -> Any:
    """The `ncu_report` module: installed, or else the one in the `extras/python` folder of the
    Nsight Compute that `ncu` (its command line tool) belongs to.

    Raises: ToolNotFound when neither is there.
    """
    try:
        return importlib.import_module(MODULE)
    except ImportError:
        pass
    for folder in _bundled(ncu):
        if (folder / f"{MODULE}.py").is_file() or (folder / MODULE).is_dir():
            sys.path.insert(0, str(folder))
            try:
                return importlib.import_module(MODULE)
            except ImportError:
                continue
            finally:
                sys.path.remove(str(folder))
    raise ToolNotFound(f"{PACKAGE} is not installed")


def _bundled(ncu: Path | None) -> list[Path]:
    """Where an Nsight Compute install keeps `ncu_report`: `extras/python` beside the real ncu
    (`/opt/nvidia/nsight-compute/2025.3.1/ncu`), in the `nsight-compute-*` folder of the CUDA
    toolkit whose `bin/ncu` is a script that starts one, or in the usual install folders (the
    H100 host's `/usr/local/cuda/bin/ncu` starts `/opt/nvidia/nsight-compute/2025.3.1/ncu`)."""
    folders = [Path(p).parent for p in sorted(glob.glob(_INSTALLS), reverse=True)]
    if ncu is not None:
        real = Path(os.path.realpath(ncu)).parent
        folders = [real, *sorted(real.parent.glob("nsight-compute*")), *folders]
    return [folder / "extras" / "python" for folder in folders]


def raw_page(report: Path, ncu: Path | None = None) -> str:
    """The report's launches as the CSV of ncu's raw page in base units (see the module's text).

    Raises: ToolNotFound when `ncu_report` is not there (`module`, with the `ncu` whose install
        may hold it); ProfgenError saying why when it cannot load the report, or finds no
        launch in it (the caller names the file).
    """
    reader = module(ncu)
    try:
        launches = [
            (action, _metrics(action)) for action in _launches(reader.load_report(str(report)))
        ]
    except Exception as exc:  # noqa: BLE001 (the reader raises what its C++ core raised)
        raise ProfgenError(f"NVIDIA's report reader for Python could not load it ({exc})") from None
    if not launches:  # (the reader loads a file cut short, or no report at all, as empty)
        raise ProfgenError(
            "NVIDIA's report reader for Python found no profiled launch in it (a report cut "
            "short, or no Nsight Compute report)"
        )
    names = sorted({name for _, metrics in launches for name in metrics})
    units = {}
    for _, metrics in reversed(launches):  # (the first launch that holds a metric gives its unit)
        units.update({name: str(metric.unit() or "") for name, metric in metrics.items()})
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([*IDENTITY, *names])
    writer.writerow(["" for _ in IDENTITY] + [units[name] for name in names])
    for number, (action, metrics) in enumerate(launches):
        cells = {name: _text(metric) for name, metric in metrics.items()}
        writer.writerow(
            _identity(reader, action, cells, number) + [cells.get(n, "") for n in names]
        )
    return out.getvalue()


def _launches(context: Any) -> Iterator[Any]:
    """Every profiled launch (an `IAction`) of every range, in the report's order."""
    for r in range(context.num_ranges()):
        span = context.range_by_idx(r)
        for a in range(span.num_actions()):
            yield span.action_by_idx(a)


def _metrics(action: Any) -> dict[str, Any]:
    """A launch's metrics (`IMetric`) by name."""
    return {name: action[name] for name in action.metric_names()}


def _identity(reader: Any, action: Any, cells: dict[str, str], number: int) -> list[str]:
    """A launch's identity cells: its number, process (left empty: the reader does not give
    it), demangled name as ncu prints it by default, block and grid shape `(x, y, z)`, and
    compute capability `9.0`."""
    name = action.name(reader.IAction.NameBase_DEMANGLED)
    shapes = [_shape(cells, prefix) for prefix in _DIMS]
    major, minor = (cells.get(metric, "") for metric in _CC)
    cc = f"{major}.{minor}" if major and minor else ""
    return [str(number), "", "", name, *shapes, cc]


def _shape(cells: dict[str, str], prefix: str) -> str:
    """`(x, y, z)` from a launch's three dimension metrics; empty when one is missing."""
    dims = [cells.get(prefix + axis, "") for axis in "xyz"]
    return f"({', '.join(dims)})" if all(dims) else ""


def _text(metric: Any) -> str:
    """A metric's value as text (empty when it has none): an integer as its digits, a double
    as Python writes it, a string as it is."""
    value = metric.value()
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


# How the child process ends: its page written; the reader not there; the report not read.
READ, NO_READER, UNREAD = 0, 3, 2


def read(report: Path, page: Path, ncu: Path | None, timeout: float) -> None:
    """Write the report's raw page (`raw_page`) into `page`, read in a child process.

    Raises: ToolNotFound when the reader is not there; ProfgenError saying why when it cannot
        read the report, crashes on it or runs past `timeout` seconds.
    """
    cmd = [sys.executable, "-m", __name__, str(report), str(page), str(ncu or "")]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ProfgenError(f"{PACKAGE} ran past {timeout:g} s on it") from None
    said = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode == NO_READER:
        raise ToolNotFound(said)
    if done.returncode == UNREAD:
        raise ProfgenError(said)
    if done.returncode != READ:
        raise ProfgenError(f"{PACKAGE} crashed on it ({describe_exit(done.returncode)})")


def main(argv: list[str]) -> int:
    """The child process: `REPORT PAGE [NCU]` -> the raw page written to PAGE."""
    if len(argv) not in (2, 3):
        print("usage: python -m profiler.collect.ncu_pyreport REPORT PAGE [NCU]", file=sys.stderr)
        return UNREAD
    ncu = Path(argv[2]) if len(argv) == 3 and argv[2] else None
    try:
        text = raw_page(Path(argv[0]), ncu)
    except ToolNotFound as exc:
        print(exc, file=sys.stderr)
        return NO_READER
    except ProfgenError as exc:
        print(exc, file=sys.stderr)
        return UNREAD
    Path(argv[1]).write_text(text, encoding="utf-8")
    return READ


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""nsys report headers -> field names, and report cells -> numbers with units applied.

Every layout nsys writes (CSV files, CSV on stdout, the column text of `nsys stats` without
`--format csv`) ends here: `columns` renames a report's headers once to short field names
(`start`, `total`, `calls`, ...), and `convert` turns the cells into numbers, times in ns and
sizes in bytes by the unit in each header (or the unit a heading names, e.g. `(KiB)`). `None`
in a numeric cell means no value (nsys writes it in `nvtx_gpu_proj_trace` and elsewhere).

Header spellings of every nsys version seen are accepted (`Time(%)`/`Time (%)`,
`Average`/`Avg (ns)`, `Calls`/`Instances`/`Num Calls`/`Count`/`Operations`,
`Start(sec)`/`Start (ns)`, `Duration(nsec)`, a bare `Total` in KiB, ...).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import bounded_names, cell_quotes, csv_parts, csvtext, reader_notes, values
from profiler.parse.table_origin import Origin

# Every report profgen reads, by canonical name, and the old names nsys used before 2021.
REPORTS = (
    "cuda_gpu_trace",
    "cuda_api_trace",
    "nvtx_gpu_proj_trace",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "cuda_gpu_sum",
    "cuda_api_sum",
    "nvtx_sum",
    "nvtx_gpu_proj_sum",
)
OLD_NAMES = {
    "gputrace": "cuda_gpu_trace",
    "gpukernsum": "cuda_gpu_kern_sum",
    "gpumemtimesum": "cuda_gpu_mem_time_sum",
    "gpumemsizesum": "cuda_gpu_mem_size_sum",
    "cudaapisum": "cuda_api_sum",
    "nvtxsum": "nvtx_sum",
    "cudaapitrace": "cuda_api_trace",
}
# Reports of the NVTX ranges of one kind (2023.2 and later), in nvtx_sum's layout less its
# `Style` column: read as nvtx_sum is (`nsys stats --report nvtx_pushpop_sum`).
RANGES_OF_ONE_KIND = {
    "nvtx_pushpop_sum": "nvtx_sum",
    "nvtx_startend_sum": "nvtx_sum",
}
_READ_AS = {**OLD_NAMES, **RANGES_OF_ONE_KIND}
_NAMES = sorted([*REPORTS, *_READ_AS], key=len, reverse=True)

_TRACE = {
    "start": "start",
    "duration": "duration",
    "corrid": "corr",
    "grdx": "grid_x",
    "grdy": "grid_y",
    "grdz": "grid_z",
    "blkx": "block_x",
    "blky": "block_y",
    "blkz": "block_z",
    "reg/trd": "registers",
    "stcsmem": "ssmem",
    "dymsmem": "dsmem",
    "bytes": "bytes",
    "srcmemkd": "src",
    "dstmemkd": "dst",
    "device": "device",
    "strm": "stream",
    "name": "name",
}
_API_TRACE = {
    "start": "start",
    "duration": "duration",
    "name": "name",
    "corrid": "corr",
    "tid": "thread",
}
_PROJ_TRACE = {
    "name": "name",
    "projectedstart": "gpu_start",
    "projectedduration": "gpu_duration",
    "origstart": "start",
    "origduration": "duration",
    "tid": "thread",
    "numgpuops": "gpu_ops",
    "lvl": "level",
}
_SUM = {
    "time": "pct",  # Time (%), Time(%): checked to add up to 100, then recomputed
    "totaltime": "total",
    "instances": "calls",
    "numcalls": "calls",
    "calls": "calls",
    "count": "calls",
    "operations": "calls",
    "avg": "avg",
    "average": "avg",
    "min": "min",
    "minimum": "min",
    "max": "max",
    "maximum": "max",
    "name": "name",
    "operation": "name",
    "range": "name",
    "style": "style",
}
# cuda_gpu_sum (2022.4 and later): kernels and memory operations in one table, each row's
# `Category` (`CUDA_KERNEL`, `MEMORY_OPER`) saying which.
_GPU_SUM = {**_SUM, "category": "category"}
_SIZE_SUM = {
    "total": "total",
    "count": "calls",
    "operations": "calls",
    "operation": "name",
    "name": "name",  # 2019.x: `Name`
}
_PROJ_SUM = {
    "range": "name",
    "style": "style",
    "totalprojtime": "gpu_total",
    "totalrangetime": "total",
    "rangeinstances": "calls",
    "totalgpuops": "gpu_ops",
}
FIELDS = {
    "cuda_gpu_trace": _TRACE,
    "cuda_api_trace": _API_TRACE,
    "nvtx_gpu_proj_trace": _PROJ_TRACE,
    "cuda_gpu_kern_sum": _SUM,
    "cuda_gpu_mem_time_sum": _SUM,
    "cuda_gpu_sum": _GPU_SUM,
    "cuda_api_sum": _SUM,
    "nvtx_sum": _SUM,
    "cuda_gpu_mem_size_sum": _SIZE_SUM,
    "nvtx_gpu_proj_sum": _PROJ_SUM,
}
REQUIRED = {
    "cuda_gpu_trace": ("start", "duration", "name"),
    "cuda_api_trace": ("start", "duration", "name"),
    "nvtx_gpu_proj_trace": ("name", "start", "duration"),
    "cuda_gpu_mem_size_sum": ("total", "name"),
    "nvtx_gpu_proj_sum": ("name", "gpu_total"),
    # a summary's table (`schema.GPU_ACTIVITIES`, `API_CALLS`, `RANGES`) holds its Avg, Min and
    # Max: one pasted with those columns cut away is refused naming them
    **dict.fromkeys(
        ("cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_api_sum", "nvtx_sum"),
        ("total", "calls", "avg", "min", "max", "name"),
    ),
    "cuda_gpu_sum": ("total", "calls", "avg", "min", "max", "name", "category"),
}
_TIMES = set("start duration total avg min max gpu_start gpu_duration gpu_total".split())
_SIZES = {"ssmem", "dsmem", "bytes"}
_SUMMED = {"duration", "total", "gpu_duration", "gpu_total"}  # analyses add these up
LABELS = {"name", "device", "src", "dst"}
TEXT = LABELS | {"style", "category"}  # fields kept as text: every other field is a number
_SUMMARIES = {
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_sum",
    "cuda_api_sum",
    "nvtx_sum",
}
NONE = "None"  # nsys's word for "no value" in a numeric cell

Columns = dict[str, tuple[str, str]]


def canonical_report(name: str) -> str | None:
    """`overlap_cuda_gpu_kern_sum` or `gpukernsum` -> its canonical report name; else None."""
    stem = name[:-3] if name.endswith(".py") else name
    for known in _NAMES:
        if stem == known or stem.endswith("_" + known):
            return _READ_AS.get(known, known)
    return None


def key(header: str) -> tuple[str, str]:
    """`Total Time (ns)` -> (`totaltime`, `ns`): the header's name, lower-cased without blanks."""
    name, unit = csvtext.split_unit(header)
    return re.sub(r"[\s_]", "", name.lower()), unit


def identify(header_line: str) -> str | None:
    """Which report a CSV header line belongs to, from its columns; None when it is none of them."""
    return identify_cells(csvtext.header_cells(header_line))


def identify_cells(cells: list[str]) -> str | None:
    """Which report a header (its cells) belongs to; None when it is none of them. A header
    alone cannot tell an OS runtime summary from a CUDA API one, nor (before 2021) a memory
    time summary from either: the marker above a table says which, where there is one."""
    keys = {key(c)[0] for c in cells}
    if "grdx" in keys:
        return "cuda_gpu_trace"
    if "projectedstart" in keys:
        return "nvtx_gpu_proj_trace"
    if "totalprojtime" in keys:
        return "nvtx_gpu_proj_sum"
    if {"start", "duration", "name", "corrid"} <= keys:
        return "cuda_api_trace"
    if "category" in keys and "totaltime" in keys:
        return "cuda_gpu_sum"
    if "operation" in keys:
        return "cuda_gpu_mem_time_sum" if "totaltime" in keys else "cuda_gpu_mem_size_sum"
    if "range" in keys and "totaltime" in keys:
        return "nvtx_sum"
    if "name" in keys and "totaltime" in keys:
        return "cuda_gpu_kern_sum" if "instances" in keys else "cuda_api_sum"
    return None


def columns(header: list[str], report: str, origin: Origin) -> Columns:
    """The header cells this report uses: header -> (field, unit).

    Raises: ParseError for a repeated column, two columns giving one field, or a missing field.
    """
    csvtext.check_header(header, origin.path, origin.expected)
    fields = FIELDS[report]
    found: Columns = {}
    keys = {key(h)[0] for h in header}
    for h in header:
        name, unit = key(h)
        if name not in fields:
            continue
        twin = next((c for c, (f, _) in found.items() if f == fields[name]), None)
        if twin is not None:
            pair = f"{cell_quotes.shown_cell(twin, 80)} and {cell_quotes.shown_cell(h, 80)}"
            raise origin.error(f"columns {pair} both give the {fields[name]} field")
        found[h] = (fields[name], unit)
    missing = [f for f in required(report) if f not in {v[0] for v in found.values()}]
    if missing == ["calls"] and report == "cuda_api_sum" and "instances" not in keys:
        raise origin.error(  # (a header with neither is taken for an API summary's: `identify`)
            f"line {origin.first_line}: no column for calls nor instances, one of which nsys "
            "prints in every table of API calls or kernels (Num Calls, Instances): its header "
            "is not nsys's (written or cut down by hand?)"
        )
    if missing:
        raise origin.error(
            f"line {origin.first_line}: no column for {', '.join(missing)}, which nsys prints in "
            f"every {report} table: its header is not nsys's (written or cut down by hand?)"
        )
    return found


def has_fields(header: list[str], report: str) -> bool:
    """Whether any header cell names a field of `report` (whether the line is a header of it
    at all, rather than text that happens to follow its marker)."""
    return any(key(cell)[0] in FIELDS[report] for cell in header)


def required(report: str) -> tuple[str, ...]:
    return REQUIRED.get(report, ("total", "calls", "name"))


def parse(source: str | bytes, header_line: str, report: str, origin: Origin) -> pd.DataFrame:
    """One report's CSV text -> a frame of field columns (see `convert`); no rows when the
    report has only its header.

    Args:
        source: the report's CSV text, header line first.
        header_line: that header line.
        report: the canonical report name.
        origin: where the text is in its file (for line numbers in errors).

    Raises: ParseError for a repeated or missing column, a cell that is no number in range, or
        an incomplete (truncated) row.
    """
    header = csvtext.header_cells(header_line)
    cols = columns(header, report, origin)
    raw = _read_fast(source, header, cols, origin) if report == "cuda_gpu_trace" else None
    if raw is None:
        raw = csvtext.read_csv_text(source, origin, usecols=list(cols))
    n_cells = len(csvtext.header_cells(_first_line(source)))
    csvtext.check_last_row(origin, n_cells, len(raw) - 1)
    return convert(raw, cols, report, origin)


def convert(
    raw: pd.DataFrame,
    cols: Columns,
    report: str,
    origin: Origin,
    units: dict[str, str] | None = None,
    shares_cut: bool = False,
) -> pd.DataFrame:
    """Cells (text, or numbers a reader already parsed) -> field columns: times in ns, sizes
    in bytes, counts whole, names capped; `units` gives the unit of a field whose header has
    none (a heading's `(KiB)`). Rows of `nvtx_gpu_proj_trace` without a range (`None` start
    and duration: GPU work outside every NVTX range) are left out. `shares_cut`: the
    `Time (%)` cells are whole numbers cut down (`81,0` for 81.4%, as nsys prints them in a
    locale with a decimal comma), so they may add up to 1 less per row. A `cuda_gpu_kern_sum`
    row with every number and no name is kept as a kernel named `UNNAMED`, and said so.

    Raises: ParseError naming the line and column of a cell that is no number in range or a
        required cell that is empty, or a column of totals past 2**62.
    """
    if report == "nvtx_gpu_proj_trace":
        raw = _without_unranged(raw, cols)
    out = {}
    for col, (field, unit) in cols.items():
        unit = unit or (units or {}).get(field, "")
        out[field] = _convert(raw[col], field, unit, report, origin, col)
    frame = pd.DataFrame(out, index=raw.index, copy=False)
    header_of = {field: col for col, (field, _) in cols.items()}
    if report == "cuda_gpu_kern_sum":
        frame = _unnamed_kernels(frame, origin)
    whole = [f for f in ("min", "max") if f in frame and report in _SUMMARIES]  # int64 columns
    for field in (*required(report), *whole):
        empty = np.flatnonzero(frame[field].isna().to_numpy())
        if len(empty):
            row = int(frame.index[empty[0]]) if len(frame.index) else 0
            raise origin.cell_error(row, header_of[field], _empty_cell(raw, int(empty[0])))
    for col, (field, _) in cols.items():
        if field in _SUMMED:
            values.check_total(frame[field], origin, col)
    if "pct" in frame and "total" in frame and frame["total"].sum() > 0:
        step = 2.0 if shares_cut else 0.1  # (cut down by up to 1: the slack of rounding to 2)
        values.check_shares(frame["pct"], step, origin, report, int(frame.index[0]))
    return frame


UNNAMED = "(no name)"  # a kernel nsys printed without a name (2019.x: one of a JIT's modules)


def _unnamed_kernels(frame: pd.DataFrame, origin: Origin) -> pd.DataFrame:
    """Kernel rows whose name cell alone is empty, named `UNNAMED` and said so (a
    `reader_notes.ReadNote`): nsys printed the row's numbers and no name. A row with any other
    required cell empty stays as it is (a cut row: `convert` refuses it)."""
    numbers = [field for field in required("cuda_gpu_kern_sum") if field != "name"]
    unnamed = frame["name"].isna() & frame[numbers].notna().all(axis=1)
    if not unnamed.any():
        return frame
    frame = frame.assign(name=frame["name"].astype("string").mask(unnamed, UNNAMED))
    line = origin.line(int(np.flatnonzero(unnamed.to_numpy())[0]))
    said = (
        f"line {line}: {int(unnamed.sum())} kernel row(s) of cuda_gpu_kern_sum with every "
        f"number and no name, imported as {UNNAMED!r} (nsys printed none, or a paste cut it)"
    )
    warnings.warn(reader_notes.ReadNote(said, line), stacklevel=3)
    return frame


def _without_unranged(raw: pd.DataFrame, cols: Columns) -> pd.DataFrame:
    """`nvtx_gpu_proj_trace` rows whose original start and duration are `None` dropped."""
    by_field = {field: col for col, (field, _) in cols.items()}
    keep = pd.Series(True, index=raw.index)
    for field in ("start", "duration"):
        cells = raw[by_field[field]]
        if cells.dtype.kind in "iuf":
            return raw  # no text cell, so no `None`
        keep &= ~cells.astype("string").str.strip().eq(NONE).fillna(False)
    return raw[keep.to_numpy()]


def _first_line(source: str | bytes) -> str:
    if isinstance(source, bytes):
        return source[: source.find(b"\n")].decode("utf-8-sig", "replace")
    return source.split("\n", 1)[0]


def _read_fast(
    source: str | bytes, header: list[str], cols: Columns, origin: Origin
) -> pd.DataFrame | None:
    """The big trace with explicit dtypes (C reader, no per-row Python); None if that fails.

    Start and duration in ns are never empty: read as int64, exact (timestamps may exceed
    2**53). The small integer fields, which may be empty, are read as float64 and made Int64
    afterwards (pandas 2's reader parses nullable Int64 columns an order of magnitude slower).
    A cell the reader cannot take (`nan`, a thousands separator, a number past int64, `None`)
    sends the file down the string path, which names the cell; `inf` and out-of-range values
    the reader takes are caught by the checks in `_convert`. So does a column pandas 3.0's
    reader made uint64 where later versions refuse a number past int64 (`2**63`): made int64
    later, it would wrap around to `-2**63`, and be refused quoting that, not the cell.

    The columns profgen does not use are read too (pandas' own `usecols` would not see a row
    with too many cells), as objects: the reader makes one string per distinct cell, where a
    `string` column checks every cell again (a third of the time of the whole read).
    """
    dtypes: dict[str, object] = {cell: object for cell in header if cell not in cols}
    fast = fast_dtypes(cols)
    try:
        table = _read_large(source, header, {**dtypes, **fast})
        if table is None:
            table = csvtext.read_csv_text(source, origin, dtype={**dtypes, **fast})
    except ParseError:
        return None  # e.g. thousands separators: the string path below handles them
    table = table[list(cols)]
    exact = [col for col, dtype in fast.items() if dtype == "int64"]
    if any(table[col].dtype != np.int64 for col in exact):
        return None  # refused below, naming the cell as written (see the docstring)
    return table


def _read_large(
    source: str | bytes, header: list[str], dtypes: dict[str, object]
) -> pd.DataFrame | None:
    """A large trace read in parts on threads (`csv_parts.read_rows`: its cells as one read
    gives them), or None: a trace under two parts' size, whose first line is not `header`, or
    whose parts did not all read (the caller reads it whole, which names the line)."""
    if csv_parts.part_count(len(source)) < 2:
        return None
    data = source.encode("utf-8") if isinstance(source, str) else source
    if csvtext.header_cells(_first_line(data)) != header:
        return None
    return csv_parts.read_rows(data, 0, header, dtypes, lead=b"\n")


def fast_dtypes(cols: Columns) -> dict[str, str]:
    """The dtypes pandas' C reader can give each column of a trace directly."""
    dtypes = {}
    for col, (field, unit) in cols.items():
        if field in LABELS:
            dtypes[col] = "category"
        elif field in ("start", "duration") and csvtext.NS_PER_UNIT.get(unit.lower(), 1) == 1:
            dtypes[col] = "int64"
        else:
            dtypes[col] = "float64"
    return dtypes


_FIGURE = re.compile(r"[0-9][0-9,.]{0,30}")  # a number as a person or nsys writes it


def _empty_cell(raw: pd.DataFrame, at: int) -> str:
    """Why a required cell of row `at` (by position) is empty: the row holds one cell alone, no
    row nsys prints (a figure a person typed under a row to compare it with), or a row cut
    short."""
    cells = [raw[col].iloc[at] for col in raw.columns]
    filled = [_as_written(cell) for cell in cells if pd.notna(cell) and str(cell).strip()]
    if len(filled) == 1 and _FIGURE.fullmatch(filled[0]):
        return (
            f"the line holds one cell alone ({cell_quotes.shown_cell(filled[0], 40)}), no row nsys "
            "prints (a figure typed under the table by hand?)"
        )
    return "the cell is empty (truncated file?)"


def _as_written(cell: object) -> str:
    """A cell as its row wrote it (a whole number the C reader made a float: `40732060`)."""
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip()


def _convert(
    raw: pd.Series, field: str, unit: str, report: str, origin: Origin, col: str
) -> pd.Series:
    if field in TEXT:
        labels = raw if isinstance(raw.dtype, pd.CategoricalDtype) else raw.astype("string")
        return bounded_names.cap_names(labels)
    if report == "cuda_gpu_mem_size_sum" and field == "total":
        # gpumemsizesum (before 2021.2) wrote a bare `Total` in KiB.
        factor = csvtext.byte_factor(unit or "KiB", origin.path, col)
    elif field in _SIZES:
        factor = csvtext.byte_factor(unit, origin.path, col)
    elif field in _TIMES:
        factor = csvtext.time_factor(unit, origin.path, col)
    else:
        factor = 1
    rule = (
        values.TIME if field in _TIMES
        else values.SIZE if field in _SIZES
        else values.SHARE if field == "pct"
        else values.COUNT
    )  # fmt: skip
    if raw.dtype.kind not in "iuf":
        raw = raw.mask(raw.astype("string").str.strip().eq(NONE).fillna(False))
    if isinstance(raw.dtype, pd.Int64Dtype) and (factor != 1 or field in ("avg", "pct")):
        raw = raw.astype("float64")  # whole numbers `nsys_numbers` read: as the C reader's
    if field in ("avg", "pct"):
        return values.numbers(raw, origin, col, rule, factor)
    return values.float_integers(raw, origin, col, rule, factor)  # (`integers`, faster)

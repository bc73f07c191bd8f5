"""The fast path of nvprof's text metrics (issue 14's speed target) reads what the plain one read.

`nvprof_metrics_text` cuts most rows of a text `--metrics`/`--events` table with NumPy (windows at
the columns' places, checked for all rows at once), and `nvprof_metrics` reads their numbers all
at once. Both are held here to the code they replaced, kept below as it was (`old_*`: every row
stripped and cut with `tokens.split` or `str.split`, object columns, pandas groupbys), through
`nvprof.read_log`: the same tables (every dtype and value) or the same error message, line
numbers included. Inputs: the real metric and event files under tests/data (text and CSV), a
generated table with every case the fast path tells apart (levels, percentages, repeated and
distinct kernels, several devices, events with `Total`), and mutated copies of all of them
(lines dropped, doubled, re-indented, tabbed, widened, cut short, non-ASCII, CRLF). The chunks
the fast path works in are made tiny so that their edges fall inside the short inputs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import (
    bounded_names,
    cell_quotes,
    csvtext,
    nvprof,
    nvprof_counters,
    nvprof_metric_rows,
    nvprof_metrics_text,
    tokens,
    values,
)
from profiler.parse.nvprof_metrics import (
    _COUNT_FIELDS,
    _FB_SECTORS,
    _PCT_FIELDS,
    _SOURCES,
    KEY,
    LONG,
    Source,
)
from profiler.parse.table_origin import Origin

DATA = Path(__file__).parent / "data"
FILES = sorted(
    p
    for p in (DATA / "nvprof").rglob("*")
    if p.is_file() and p.name != "README.md" and "Invocations" in p.read_text()
)


# --- the code the fast path replaced, as it was -------------------------------------------------

_OLD_NO_KERNEL = (
    "a metric row with no `Kernel:` line above it (nvprof prints `Device \"...\"` and "
    "`Kernel: NAME` lines above each kernel's rows; trimmed output?)"
)


def old_metrics(tables, stage, path):
    """`nvprof._metrics` as it was, but for what changed on purpose: metrics none of which maps
    give no `metrics` table (they were refused, or left out beside other tables), and every row
    is a `counters` row (`old_counters`)."""
    read = {
        "text_metrics": lambda o, t: old_text_rows(o, t.above),
        "csv_metrics": lambda o, t: old_csv_rows(o),
    }
    origins = [t.full_origin() for t in tables]  # (a text table read from bytes: text left out)
    long = [(read[t.kind](o, t), o) for t, o in zip(tables, origins, strict=True)]
    found = pd.concat([old_contributions(rows, origin) for rows, origin in long])
    every = pd.concat([rows for rows, _ in long])
    keys = every[KEY]
    same = np.ones(max(len(keys) - 1, 0), dtype=bool)
    for column in KEY:
        cells = keys[column].to_numpy(dtype=object)
        same &= cells[1:] == cells[:-1]
    kernels = keys[np.append(True, ~same)[: len(keys)]].drop_duplicates(ignore_index=True)
    counters = old_counters(every, kernels, stage)
    table = old_metrics_table(kernels, found, stage, Origin(path, nvprof.EXPECTED))
    return {"counters": counters} if table is None else {"metrics": table, "counters": counters}


def old_counters(every: pd.DataFrame, kernels: pd.DataFrame, stage: str) -> pd.DataFrame:
    """Every row cut the old way, each cell read on its own (`nvprof_counters.read_cell`)."""
    ids = kernels.reset_index(names="kernel_id")
    rows = every.reset_index(drop=True).merge(ids, on=KEY, how="left", sort=False)
    read = {c: [nvprof_counters.read_cell(cell) for cell in rows[c]] for c in ("min", "max", "avg")}
    avg = rows["avg"].map(lambda c: c.strip() if isinstance(c, str) else pd.NA)
    out = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": rows["kernel_id"].astype("int64"),
            "name": old_capped(rows["kernel"]),
            "section": pd.NA,
            "metric": rows["metric"],
            "unit": [unit or pd.NA for _, unit in read["avg"]],
            "value": [v for v, _ in read["avg"]],
            "text": avg,
            "invocations": pd.to_numeric(rows["invocations"]),
            "min": [v for v, _ in read["min"]],
            "max": [v for v, _ in read["max"]],
        }
    )
    return schema.validate(schema.conform(out, schema.COUNTERS), schema.COUNTERS)


def old_text_rows(origin: Origin, above: str = "") -> pd.DataFrame:
    """The rows of one text metric or event table (`origin.text` starts at its header); a
    `Kernel:` line right above the header (`above`, a paste's layout) names the rows that come
    before any `Kernel:` line below it, as does the `Device ...    Kernel:` line a header runs on
    into (`AvgDevice "..."`).

    The `Device` and `Kernel:` lines (and blank ones) are read one by one; the metric rows
    between them, nearly every line, are cut into tokens all at once (`tokens.split`), and only
    a row with a level among its values (`Low (3)`) is cut on its own.

    Returns: DataFrame with `LONG` columns (as text) and `occurrence`, indexed by data row (messages
        name lines).

    Raises: ParseError naming the line of a row that is no metric row or comes before any
        `Kernel:` line.
    """
    header, *lines = str(origin.text).split("\n")
    run_on = re.search(r"(?:Avg|Total)(?=Device \"|Kernel: )", header)
    if run_on is not None:  # (on purpose: the line a header ran on into names its kernel)
        header, above = header[: run_on.end()], header[run_on.end() :]
    n_values = 4 if header.split()[-1] == "Total" else 3
    events = "Event Name" in header
    bodies = [line.strip() for line in lines]
    marked = [i for i, b in enumerate(bodies) if not b or b.startswith(("Device ", "Kernel:"))]
    is_row = np.ones(len(bodies), dtype=bool)
    devices, device_at, kernels, kernel_at = [""], [-1], [], []
    for offset in marked:
        body = bodies[offset]
        if body.startswith("Device "):
            label, _, body = body[7:].partition('"  ')  # `Device "X (0)"[    Kernel: k]`
            devices.append(label.strip().strip('"'))
            device_at.append(offset)
            body = bodies[offset] = body.strip()
        if not body:
            is_row[offset] = False
        elif body.startswith("Kernel:"):
            kernels.append(body[7:].strip())
            kernel_at.append(offset)
            is_row[offset] = False
    offsets = np.flatnonzero(is_row)
    old_kernel_above(above, offsets, (devices, device_at, kernels, kernel_at))
    fields = old_split_rows([bodies[i] for i in offsets.tolist()], n_values, events)
    block = np.searchsorted(np.array(kernel_at, dtype="int64"), offsets, side="right") - 1
    bad = np.flatnonzero(~fields.ok | (block < 0))
    if len(bad):
        what = "not a metric or event row" if not fields.ok[bad[0]] else _OLD_NO_KERNEL
        raise origin.error(f"line {origin.first_line + int(offsets[bad[0]]) + 1}: {what}")
    device = np.searchsorted(np.array(device_at, dtype="int64"), offsets, side="right") - 1
    kernel_codes, kernel_names = pd.factorize(pd.Series(kernels, dtype=object))
    row_kernel = kernel_codes[block]
    frame = pd.DataFrame(
        {
            "device": np.asarray(devices, dtype=object)[device],
            "kernel": np.asarray(kernel_names, dtype=object)[row_kernel],
            **fields.columns,
        },
        columns=LONG,
        index=pd.Index(offsets, dtype="int64"),
        dtype=object,
    )
    device_codes = pd.factorize(np.asarray(devices, dtype=object))[0].astype("int64")[device]
    starts = np.ones(len(offsets), dtype=bool)
    starts[1:] = block[1:] != block[:-1]
    return old_blocks(frame, origin, starts, (device_codes, row_kernel.astype("int64")))


def old_kernel_above(above: str, offsets: np.ndarray, found: tuple[list, ...]) -> None:
    """Put a `Kernel:` (or `Device "X"    Kernel: k`) line from above the header before the
    first line, when the first row comes before every `Kernel:` line below the header."""
    devices, device_at, kernels, kernel_at = found
    body = above.strip()
    device = ""
    if body.startswith("Device "):
        device, _, body = body[7:].partition('"  ')
        body = body.strip()
    if not body.startswith("Kernel:") or not len(offsets):
        return
    if kernel_at and kernel_at[0] < offsets[0]:
        return
    kernels.insert(0, body[7:].strip())
    kernel_at.insert(0, -1)
    if device:
        devices.insert(1, device.strip().strip('"'))
        device_at.insert(1, -1)


@dataclass(frozen=True)
class OldFields:
    """Metric rows cut into `LONG`'s invocations, metric, min, max and avg; `ok` False for a
    row that is none."""

    columns: dict[str, list[str]]
    ok: np.ndarray


def old_split_rows(bodies: list[str], n_values: int, events: bool) -> OldFields:
    """`old_split_row` of every row (stripped), most of them at once with `tokens.split`."""
    names = ("invocations", "metric", "min", "max", "avg")
    cut = tokens.split(bodies)
    if cut is None:  # not ASCII: one by one
        found = [old_split_row(body, n_values, events) for body in bodies]
        ok = np.array([f is not None for f in found], dtype=bool)
        cells = [f if f is not None else ("",) * 5 for f in found]
        return OldFields(dict(zip(names, map(list, zip(*cells, strict=True)), strict=True)), ok)
    count = cut.count
    # `old_split_row`'s fast case: no `)` among the last n_values tokens (no level such as
    # `Low (3)`), with two tokens before them (events) or two and a description (metrics)
    parens = np.flatnonzero(cut.codes == ord(")"))
    value_start = cut.start[np.maximum(cut.index(-n_values), 0)]
    row_end = cut.end[np.maximum(cut.first + count - 1, 0)]
    has_paren = np.searchsorted(parens, row_end) > np.searchsorted(parens, value_start)
    head = count - n_values
    fast = (head >= 1) & ~has_paren
    ok = fast & ((head == 2) if events else (head >= 2))
    avg = -1 - (n_values - 3)  # `Total` is the last value when there are four
    columns = {
        "invocations": cut.cells(0),
        "metric": cut.cells(1),
        "min": cut.cells(avg - 2),
        "max": cut.cells(avg - 1),
        "avg": cut.cells(avg),
    }
    for i in np.flatnonzero(~fast).tolist():  # a level among the values, or too few tokens
        one = old_split_row(bodies[i], n_values, events)
        ok[i] = one is not None
        if one is not None:
            for name, cell in zip(names, one, strict=True):
                columns[name][i] = cell
    return OldFields(columns, ok)


def old_split_row(body: str, n_values: int, events: bool) -> tuple[str, ...] | None:
    """`10  inst_executed  Instructions Executed  3204  3204  3204` -> (invocations, name, Min,
    Max, Avg); values are taken from the right, a level (`Low (3)`) as one value. None: no such
    row."""
    fast = body.rsplit(None, n_values)  # no level among the values: two splits
    if len(fast) == n_values + 1 and ")" not in body[len(fast[0]) :]:
        head, found = fast[0].split(None, 2), fast[:0:-1]
    else:
        head, found = body.split(), []
        while len(found) < n_values and len(head) > 2:
            last = head.pop()
            if last.startswith("(") and last.endswith(")") and len(head) > 2:
                last = f"{head.pop()} {last}"
            found.append(last)
    if len(found) < n_values or len(head) < 2 or (events and len(head) != 2):
        return None
    avg, high, low = found[n_values - 3 :]  # found holds [Total,] Avg, Max, Min
    return head[0], head[1], low, high, avg


def old_csv_rows(origin: Origin) -> pd.DataFrame:
    """The rows of one `--csv` metric or event table.

    Returns: DataFrame with `LONG` columns (as text) and `occurrence`, indexed by data row.

    Raises: ParseError for a repeated column or a truncated last row.
    """
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin)
    csvtext.check_last_row(origin, len(header), len(raw) - 1)
    name = "Metric Name" if "Metric Name" in raw else "Event Name"
    frame = raw[["Device", "Kernel", "Invocations", name, "Min", "Max", "Avg"]].astype(object)
    frame = frame.set_axis(LONG, axis=1).set_axis(pd.RangeIndex(len(raw)))
    nameless = np.flatnonzero(frame["kernel"].isna().to_numpy())
    if len(nameless):
        raise origin.cell_error(int(nameless[0]), "Kernel", "no kernel name")
    return old_blocks(frame.assign(device=frame["device"].fillna("")), origin)


def old_blocks(
    frame: pd.DataFrame,
    origin: Origin,
    starts: np.ndarray | None = None,
    codes: tuple[np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """`frame` with `occurrence`: how many earlier blocks of rows had its device and kernel. A
    block starts at each of `starts` (the rows under a `Kernel:` line), by default where the
    device or kernel changes. `codes`: each row's device and kernel as numbers (equal numbers
    for equal names), when the caller has them.

    Raises: ParseError naming the line of a metric listed twice for one kernel.
    """
    if codes is None:
        codes = (
            pd.factorize(frame["device"])[0].astype("int64"),
            pd.factorize(frame["kernel"])[0].astype("int64"),
        )
    device, kernel = codes
    key = device * (int(kernel.max(initial=0)) + 1) + kernel
    if starts is None:
        starts = np.ones(len(key), dtype=bool)
        starts[1:] = key[1:] != key[:-1]
    first = pd.Series(key[starts])
    block = np.cumsum(starts) - 1  # each row's block
    occurrence = first.groupby(first).cumcount().to_numpy(dtype="int64")[block]
    frame = frame.assign(occurrence=occurrence)
    metric = pd.factorize(frame["metric"], use_na_sentinel=False)[0].astype("int64")
    group = pd.factorize(key * (int(occurrence.max(initial=0)) + 1) + occurrence)[0]
    again = np.flatnonzero(
        pd.Series(group * (int(metric.max(initial=0)) + 1) + metric).duplicated()
    )
    if len(again):
        row = int(frame.index[again[0]])
        shown = cell_quotes.shown_cell(str(frame["metric"].iloc[again[0]]), 80)
        raise origin.error(f"line {origin.line(row)}: {shown} again for the same kernel")
    return frame


def old_contributions(rows: pd.DataFrame, origin: Origin) -> pd.DataFrame:
    """Every row that feeds a column of `schema.METRICS`, its Avg parsed and weighted.

    Returns: DataFrame of `KEY`, `field`, `rank` (the source's place, best 0), `metric` and
        `value`.

    Raises: ParseError naming the line and column of an Invocations or Avg cell that is no
        number in range.
    """
    values.numbers(rows["invocations"], origin, "Invocations", values.COUNT)
    codes, names = pd.factorize(rows["metric"])
    found = []
    for field, sources in _SOURCES.items():
        for rank, source in enumerate(sources):
            per_name = np.array([old_weight(source, str(m)) for m in names] + [None], dtype=float)
            weight = pd.Series(per_name[codes], index=rows.index)
            picked = rows[weight.notna().to_numpy()]
            if len(picked):
                weights = weight[weight.notna()]
                for column in ("min", "max"):  # checked, not kept: a cut row fails here
                    old_avg(picked[column], weights, field, origin, column.title())
                number = old_avg(picked["avg"], weights, field, origin)
                found.append(picked.assign(field=field, rank=rank, value=number))
    if not found:
        return pd.DataFrame(columns=[*KEY, "field", "rank", "metric", "value"])
    return pd.concat(found)[[*KEY, "field", "rank", "metric", "value"]]


def old_weight(source: Source, metric: str) -> float | None:
    """The weight of `metric` in `source`, None when it is not one of its metrics."""
    sectors = _FB_SECTORS.match(metric)
    if sectors is not None:
        metric = f"fb_{sectors['way']}_sectors"
    return dict(source.weights).get(metric)


def old_avg(
    cells: pd.Series, weight: pd.Series, field: str, origin: Origin, column: str = "Avg"
) -> pd.Series:
    """Min, Max or Avg cells -> weighted numbers: `97.19%` is a percentage as it stands,
    `Low (3)` is 3.

    Raises: ParseError naming the line and column of a cell that is no number in range.
    """
    text = [str(cell).strip() for cell in cells.tolist()]
    tail = np.array([t[-1:] for t in text], dtype=object)
    pct = (tail == "%") & (field in _PCT_FIELDS)
    number = list(text)
    for i in np.flatnonzero(pct).tolist():
        number[i] = text[i][:-1]
    for i in np.flatnonzero(tail == ")").tolist():  # a level: `Low (3)`
        if "(" in text[i]:
            number[i] = text[i].rpartition("(")[2].removesuffix(")")
    factor = np.where(pct, 1.0, weight.to_numpy(dtype="float64"))
    series = pd.Series(number, index=cells.index, dtype=object)
    return values.numbers(series, origin, column, values.VALUE, factor, cells)


def old_metrics_table(
    kernels: pd.DataFrame, found: pd.DataFrame, stage: str, origin: Origin
) -> pd.DataFrame | None:
    """Per kernel, each field from its best complete source.

    Args:
        kernels: `KEY` of every kernel the file lists, in order.
        found: `old_contributions` of every table.
        stage: the stage key of every row.
        origin: the file (for messages).

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel; None when no metric
        maps to a column.

    Raises: ParseError when a sum leaves the range of int64.
    """
    best = old_best(found)
    if best.empty:
        return None
    wide = best.pivot_table(index=KEY, columns="field", values="value")
    table = kernels.merge(wide.reset_index(), on=KEY, how="left", sort=False)
    for field in _COUNT_FIELDS + _PCT_FIELDS:
        if field not in table:
            table[field] = np.nan
    old_check_sums(table, origin)
    out = table.assign(
        stage=stage,
        kernel_id=np.arange(len(table), dtype="int64"),
        name=old_capped(table["kernel"]),
        **{f: values.whole(table[f].astype("float64")) for f in _COUNT_FIELDS},
    )
    fill = ("range", "grid", "block", "duration_ns", "registers")
    return schema.validate(schema.conform(out, schema.METRICS, fill=fill), schema.METRICS)


def old_capped(kernels: pd.Series) -> pd.Series:
    """`bounded_names.cap_names` of the kernel names as text, each distinct name capped once."""
    codes, names = pd.factorize(kernels, use_na_sentinel=False)
    capped = bounded_names.cap_names(pd.Series(names, dtype="string")).to_numpy(dtype=object)
    return pd.Series(capped[codes], index=kernels.index, dtype="string")


def old_best(found: pd.DataFrame) -> pd.DataFrame:
    """Per kernel and field, the summed value of the best-ranked source that is complete."""
    if found.empty:
        return found
    sums = found.groupby([*KEY, "field", "rank"], sort=False).agg(
        value=("value", "sum"), n=("metric", "nunique")
    )
    sums = sums.reset_index()
    need = [
        len(_SOURCES[f][r].weights) if _SOURCES[f][r].whole else 1
        for f, r in zip(sums["field"], sums["rank"], strict=True)
    ]
    complete = sums[sums["n"].to_numpy() >= np.array(need, dtype="int64")]
    return complete.sort_values("rank", kind="stable").drop_duplicates([*KEY, "field"])


def old_check_sums(table: pd.DataFrame, origin: Origin) -> None:
    """Summed counts stay below `values.LIMIT` (each term was checked on its own).

    Raises: ParseError naming the kernel and the field.
    """
    for field in _COUNT_FIELDS:
        big = np.flatnonzero(table[field].to_numpy(dtype="float64") >= values.LIMIT)
        if len(big):
            name = cell_quotes.shown_cell(str(table["kernel"].iloc[big[0]]), 80)
            raise origin.error(f"kernel {name}: {field} adds up past 2**62")


# --- inputs -----------------------------------------------------------------------------------

METRICS = [  # name, description, values as nvprof prints them
    ("flop_count_sp", "Floating Point Operations(Single Precision)", ["36134886144", "0", "12"]),
    ("flop_count_sp_add", "Floating Point Operations(Single Precision Add)", ["2581063296"]),
    ("flop_count_sp_mul", "Floating Point Operations(Single Precision Mul)", ["0", "7"]),
    ("flop_count_sp_fma", "Floating Point Operations(Single Precision FMA)", ["16776911424"]),
    ("dram_read_transactions", "Device Memory Read Transactions", ["44206708", "1.5"]),
    ("dram_write_bytes", "Device Memory Write Bytes", ["123456", "0"]),
    ("achieved_occupancy", "Achieved Occupancy", ["0.517002", "0.994198", ".5", "51.7%"]),
    ("sm_efficiency", "Multiprocessor Activity", ["97.188709%", "100.00%", "5.%"]),
    ("dram_utilization", "Device Memory Utilization", ["Low (3)", "Idle (0)", "Mid (5)"]),
    ("dram_read_throughput", "Device Memory Read Throughput", ["7.2244GB/s", "0.00000B/s"]),
    ("gld_efficiency", "Global Memory Load Efficiency", ["44.48%", "0.00%"]),
    ("inst_executed", "Instructions Executed", ["320480600", "1e3"]),
]
EVENTS = [
    ("fb_subp0_read_sectors", ["21951348", "0"]),
    ("fb_subp1_read_sectors", ["22131006"]),
    ("fb_subp0_write_sectors", ["23294791", "3"]),
    ("elapsed_cycles_sm", ["75288048"]),
]
KERNELS = ["multiconvolution_64", "void k<int=1>(float*, int)", "getError(int, int, float*)"]


def generated(seed: int, kernels: int = 12) -> str:
    """A metrics table and an events table (with `Total`) as nvprof prints them: columns
    right-aligned, `Device` lines, repeated and distinct kernels, levels and percentages."""
    rng = random.Random(seed)
    out = ["==1== Profiling result:", "==1== Metric result:"]
    out.append(
        f"{'Invocations':>11}{'Metric Name':>42}{'Metric Description':>50}"
        f"{'Min':>12}{'Max':>12}{'Avg':>12}"
    )
    for k in range(kernels):
        if k % 5 == 0:
            out.append(f'Device "Tesla K{k}c ({k % 2})"')
        out.append(f"    Kernel: {rng.choice(KERNELS)}")
        for name, text, cells in rng.sample(METRICS, rng.randint(1, len(METRICS))):
            value = [rng.choice(cells) for _ in range(3)]
            row = f"{rng.choice(['1', '10', '1000']):>11}{name:>42}{text:>50}"
            out.append(row + "".join(f"{v:>12}" for v in value))
    out += ["", "==1== Event result:"]
    out.append(
        f"{'Invocations':>11}{'Event Name':>42}"
        + "".join(f"{h:>12}" for h in ("Min", "Max", "Avg", "Total"))
    )
    out.append('Device "Tesla K20c (0)"')
    for _ in range(kernels // 2):
        out.append(f"\tKernel: {rng.choice(KERNELS)}")
        for name, cells in rng.sample(EVENTS, rng.randint(1, len(EVENTS))):
            value = [rng.choice(cells) for _ in range(4)]
            out.append(f"{'2':>11}{name:>42}" + "".join(f"{v:>12}" for v in value))
    return "\n".join(out) + "\n"


def at_random(rng: random.Random, old: str, new: str) -> Callable[[str], str]:
    """An edit that replaces one `old` of a line, picked at random, with `new`."""

    def edit(line: str) -> str:
        places = [m.start() for m in re.finditer(re.escape(old), line)]
        if not places:
            return line
        at = rng.choice(places)
        return line[:at] + new + line[at + len(old) :]

    return edit


def mutants(text: str, seed: int, count: int = 10, every: bool = True) -> list[str]:
    """`text` and copies of it with each edit made on every other line, and with one line
    changed (or two) at random, cut short, with CRLF ends."""
    rng = random.Random(seed)
    rows = text.split("\n")
    edits = [
        lambda s: None,
        lambda s: f"{s}\n{s}",
        lambda s: " " * 80 + s,
        lambda s: "\u00a0" + s,
        lambda s: f"{s}\n\u00a0\n\u00a0",
        lambda s: s + "  ",
        lambda s: s + "\r",
        lambda s: s[1:] + " ",  # a row shifted: as long, tokens one byte to the left
        lambda s: " " + s[:-1],
        lambda s: s.rstrip()[: len(s.rstrip()) // 2],
        lambda s: s.replace(" ", "", 3),
        at_random(rng, " ", "\t"),
        at_random(rng, " ", "\x01"),
        at_random(rng, " ", "\x0b"),
        at_random(rng, " ", "x"),  # two tokens joined
        lambda s: re.sub(r" +(?=\S+\s*$)", lambda m: "9" * len(m[0]), s),  # ... at full width
        lambda s: re.sub(r"\S+", lambda m: " " * len(m[0]) if rng.random() < 0.2 else m[0], s),
        at_random(rng, "  ", "\u00a0"),  # a blank as long in UTF-8 as the two spaces
        at_random(rng, "   ", "\u3000"),
        at_random(rng, "0", " "),  # one token split
        at_random(rng, "1", "x"),
        at_random(rng, "0", "1" * 20),
        at_random(rng, ".", ","),
        at_random(rng, "  0", "100"),
        at_random(rng, "  ", "(3"),
        at_random(rng, "   ", " ) "),
        at_random(rng, "Efficiency", "Effizienz\u00fc"),
        at_random(rng, "Kernel:", "Kernel: x"),
        at_random(rng, "achieved_occupancy", "sm_efficiency"),
        lambda s: f'Device "Other (1)"\n{s}',
        lambda s: "    Kernel:" + s[11:],  # as long as a row
        lambda s: "    Device " + s[11:],
    ]
    out = [text, text.replace("\n", "\r\n"), text[: len(text) // 2], text[: len(text) * 3 // 4]]
    for edit in edits[1:] if every else []:  # each on every other line (not on the headers)
        changed = [
            row if "Invocations" in row or i % 2 else edit(row) for i, row in enumerate(rows)
        ]
        out.append("\n".join(row for row in changed if row is not None))
    for _ in range(count):
        for _ in range(rng.choice([1, 1, 2])):
            i = rng.randrange(len(rows))
            new = rng.choice(edits)(rows[i])
            rows = rows[:i] + ([] if new is None else new.split("\n")) + rows[i + 1 :]
        out.append("\n".join(rows))
        rows = text.split("\n")
    return out


def outcome(path: Path):
    try:
        return "ok", nvprof.read_log(path, "s")
    except ParseError as exc:
        return "error", str(exc)


def same(fast, old) -> None:
    assert fast[0] == old[0], (fast, old)
    if fast[0] == "error":
        assert fast[1] == old[1]
        return
    assert list(fast[1]) == list(old[1])
    for name in fast[1]:
        pd.testing.assert_frame_equal(fast[1][name], old[1][name], check_exact=True)


def check(texts: list[str], tmp_path: Path, monkeypatch, suffix: str = ".txt") -> list[str]:
    """Each text read with the fast path and with the old code: the same outcome."""
    kinds = []
    for i, text in enumerate(texts):
        path = tmp_path / f"m{i}{suffix}"
        path.write_text(text, encoding="utf-8")
        fast = outcome(path)
        with monkeypatch.context() as patch:
            patch.setattr(nvprof, "_metrics", old_metrics)
            old = outcome(path)
        same(fast, old)
        kinds.append(fast[0] if fast[0] == "error" else "metrics" * ("metrics" in fast[1]))
    return kinds


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(nvprof_metrics_text, "_CHUNK", 7)
    monkeypatch.setattr(tokens, "_ROWS", 13)


# --- the comparisons ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_files_and_their_mutants_read_as_before(path, tmp_path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    texts = mutants(text, seed=len(path.name), every=path.suffix != ".csv")  # (CSV: cut anyway)
    check(texts, tmp_path, monkeypatch, path.suffix)


@pytest.mark.parametrize("seed", range(3))
def test_generated_tables_and_their_mutants_read_as_before(seed, tmp_path, monkeypatch):
    kinds = check(mutants(generated(seed), seed, count=10), tmp_path, monkeypatch)
    assert kinds.count("metrics") >= 8 and kinds.count("error") >= 3  # (both compared)


def test_benchmark_rows_read_as_before(tmp_path, monkeypatch):
    """The benchmark's input (one real kernel's block, repeated), small."""
    lines = (DATA / "nvprof" / "8.x" / "lbp-text-metrics.txt").read_text().splitlines()
    text = "\n".join(lines[:7] + lines[7:15] * 60) + "\n"
    kinds = check(mutants(text, seed=3, count=2), tmp_path, monkeypatch)
    assert kinds[0] == "metrics"


def test_most_rows_of_a_generated_table_take_the_fast_path(monkeypatch):
    """(The comparisons above exercise the fast path, not only the line-by-line one.)"""
    text = generated(1, kernels=40)
    body = text[text.index("Invocations") : text.index("\n\n")]
    calls = []
    real = nvprof_metrics_text._split_row
    monkeypatch.setattr(nvprof_metrics_text, "_split_row", lambda *a: calls.append(a) or real(*a))
    rows = nvprof_metrics_text.text_rows(Origin(Path("m.txt"), "x", body))
    levels = body.count(")\n") + body.count(") \n")
    assert len(rows.at) > 200 and len(calls) <= levels + 2


def test_checked_fixtures_hold_metrics():
    """(The real files give tables and refusals both.)"""
    kinds = [outcome(p)[0] for p in FILES]
    assert kinds.count("ok") >= 3 and kinds.count("error") >= 1


def test_names_of_one_hash_fall_back_to_the_line_by_line_walk(tmp_path, monkeypatch):
    """With a hash that keeps nothing but a name's last 8 bytes, names clash: the table is read
    line by line, and reads the same."""
    monkeypatch.setattr(nvprof_metric_rows, "MIX", np.uint64(0))
    windows = np.frombuffer(b"".join(f"{n:>42}".encode() for n, _, _ in METRICS), dtype=np.uint8)
    with pytest.raises(nvprof_metric_rows.Clash):  # sm_ and gld_efficiency
        nvprof_metric_rows.Names(42).codes(windows.reshape(len(METRICS), 42))
    check([generated(2)], tmp_path, monkeypatch)


@pytest.mark.parametrize("seed", range(3))
def test_a_view_of_the_file_bytes_reads_as_the_text(seed):
    """`text_rows` given the table as a view into the file's bytes (no copy): the same rows."""
    text = mutants(generated(seed), seed, count=0)[seed]
    body = text[text.index("Invocations") :]
    body = body[: body.index("\n\n") + 1] if "\n\n" in body else body
    origin = Origin(Path("m.txt"), "x", body)
    data = b"==1== preamble\n" + body.encode() + b"\nafter\n"
    view = memoryview(data)[15 : 15 + len(body.encode())]
    for got, want in zip(
        outcome_of(nvprof_metrics_text.text_rows, origin, view),
        outcome_of(nvprof_metrics_text.text_rows, origin),
        strict=True,
    ):
        if isinstance(got, nvprof_metric_rows.Rows):
            for field in ("at", "device", "kernel", "metric", "occurrence"):
                assert np.array_equal(getattr(got, field), getattr(want, field))
            assert (got.devices, got.kernels, got.metrics) == (
                want.devices,
                want.kernels,
                want.metrics,
            )
            for column, cells in got.cells.items():
                everyone = np.arange(len(got.at))
                assert cells.pick(everyone) == want.cells[column].pick(everyone)
        else:
            assert got == want


def outcome_of(func, *args):
    try:
        return "ok", func(*args)
    except ParseError as exc:
        return "error", str(exc)

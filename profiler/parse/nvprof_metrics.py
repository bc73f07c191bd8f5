"""nvprof's `--metrics` and `--events` output, text and `--csv`, -> `schema.METRICS`.

nvprof reports a metric or event per kernel, over all of its launches (`Invocations`), as Min,
Max and Avg (events also as Total, in later versions):

- text: `Invocations  Metric Name  Metric Description  Min  Max  Avg` (or `Invocations  Event
  Name  Min  Max  Avg[  Total]`), then `Device "TITAN Xp (0)"` and `Kernel: <name>` lines above
  each kernel's rows. A description holds spaces; a value may be a level with a space (`Low (3)`,
  `Idle (0)`), so a row is read from both ends.
- `--csv`: `"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"`
  (or `"Event Name"` without a description, with or without `"Total"`).

One row of `schema.METRICS` per kernel (and device), in the order the file lists them: its
`kernel_id` is that position (nvprof gives no launch id), and its values are the **Avg** per
launch. What maps, best source first:

- `fp32_flops`: `flop_count_sp` (nvprof counts an FMA as 2); else `flop_count_sp_add` +
  `flop_count_sp_mul` + 2 x `flop_count_sp_fma`, all three present;
- `dram_read_bytes`: `dram_read_bytes`; else 32 x `dram_read_transactions`; else 32 x the
  `fb*_subp*_read_sectors` events, summed (a DRAM transaction and a sector are 32 bytes);
- `dram_write_bytes`: the same, for writes;
- `achieved_occupancy_pct`: 100 x `achieved_occupancy` (a ratio);
- `sm_throughput_pct`: `sm_efficiency`, the share of time an SM had a warp active: nvprof's
  nearest to Nsight Compute's SM throughput, and an upper bound of it;
- `dram_throughput_pct`: 10 x `dram_utilization`, a level from 0 to 10 (`Low (3)` -> 30%).

Not mapped, for want of a column: Invocations, Min, Max and Total; every other metric and event
(efficiencies, hit rates, throughputs in bytes/s, instruction counts, stall reasons, cycles); the
device. nvprof measures no duration in this mode, so `duration_ns` is missing and the roofline can
place a kernel by its intensity (FLOPs per DRAM byte) but not by its rates; `range`, `grid`,
`block` and `registers` are missing too. A file none of whose metrics maps is refused, naming
what it has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import csvtext, tokens, values
from profiler.parse.values import Origin

LONG = ["device", "kernel", "invocations", "metric", "min", "max", "avg"]
# A kernel is a block of rows: nvprof lists each kernel once per device and table, so a name's
# second block is another kernel of the same name (`occurrence` 1), met again in the next table.
KEY = ["device", "kernel", "occurrence"]
_FB_SECTORS = re.compile(r"fb[0-9]*_subp[0-9]+_(?P<way>read|write)_sectors\Z")
_PCT_FIELDS = ("achieved_occupancy_pct", "sm_throughput_pct", "dram_throughput_pct")
_COUNT_FIELDS = ("fp32_flops", "dram_read_bytes", "dram_write_bytes")


@dataclass(frozen=True)
class Source:
    """Metrics that give a field together: metric -> weight; `whole`: all must be present."""

    weights: tuple[tuple[str, float], ...]
    whole: bool = True


_SOURCES: dict[str, tuple[Source, ...]] = {
    "fp32_flops": (
        Source((("flop_count_sp", 1),)),
        Source((("flop_count_sp_add", 1), ("flop_count_sp_mul", 1), ("flop_count_sp_fma", 2))),
    ),
    "dram_read_bytes": (
        Source((("dram_read_bytes", 1),)),
        Source((("dram_read_transactions", 32),)),
        Source((("fb_read_sectors", 32),), whole=False),  # stands for every fb*_subp*_read
    ),
    "dram_write_bytes": (
        Source((("dram_write_bytes", 1),)),
        Source((("dram_write_transactions", 32),)),
        Source((("fb_write_sectors", 32),), whole=False),
    ),
    "achieved_occupancy_pct": (Source((("achieved_occupancy", 100),)),),
    "sm_throughput_pct": (Source((("sm_efficiency", 1),)),),
    "dram_throughput_pct": (Source((("dram_utilization", 10),)),),
}
KNOWN = (
    "flop_count_sp[_add/_mul/_fma], dram_read/write_bytes or _transactions, "
    "fb*_subp*_read/write_sectors, achieved_occupancy, sm_efficiency, dram_utilization"
)


def text_rows(origin: Origin) -> pd.DataFrame:
    """The rows of one text metric or event table (`origin.text` starts at its header).

    The `Device` and `Kernel:` lines (and blank ones) are read one by one; the metric rows
    between them, nearly every line, are cut into tokens all at once (`tokens.split`), and only
    a row with a level among its values (`Low (3)`) is cut on its own.

    Returns: DataFrame with `LONG` columns (as text) and `occurrence`, indexed by data row (messages
        name lines).

    Raises: ParseError naming the line of a row that is no metric row or comes before any
        `Kernel:` line.
    """
    header, *lines = str(origin.text).split("\n")
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
    fields = _split_rows([bodies[i] for i in offsets.tolist()], n_values, events)
    block = np.searchsorted(np.array(kernel_at, dtype="int64"), offsets, side="right") - 1
    bad = np.flatnonzero(~fields.ok | (block < 0))
    if len(bad):
        what = "not a metric or event row" if not fields.ok[bad[0]] else "a row before any Kernel:"
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
    return _blocks(frame, origin, starts, (device_codes, row_kernel.astype("int64")))


@dataclass(frozen=True)
class _Fields:
    """Metric rows cut into `LONG`'s invocations, metric, min, max and avg; `ok` False for a
    row that is none."""

    columns: dict[str, list[str]]
    ok: np.ndarray


def _split_rows(bodies: list[str], n_values: int, events: bool) -> _Fields:
    """`_split_row` of every row (stripped), most of them at once with `tokens.split`."""
    names = ("invocations", "metric", "min", "max", "avg")
    cut = tokens.split(bodies)
    if cut is None:  # not ASCII: one by one
        found = [_split_row(body, n_values, events) for body in bodies]
        ok = np.array([f is not None for f in found], dtype=bool)
        cells = [f if f is not None else ("",) * 5 for f in found]
        return _Fields(dict(zip(names, map(list, zip(*cells, strict=True)), strict=True)), ok)
    count = cut.count
    # `_split_row`'s fast case: no `)` among the last n_values tokens (no level such as
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
        one = _split_row(bodies[i], n_values, events)
        ok[i] = one is not None
        if one is not None:
            for name, cell in zip(names, one, strict=True):
                columns[name][i] = cell
    return _Fields(columns, ok)


def _split_row(body: str, n_values: int, events: bool) -> tuple[str, ...] | None:
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


def csv_rows(origin: Origin) -> pd.DataFrame:
    """The rows of one `--csv` metric or event table.

    Returns: DataFrame with `LONG` columns (as text) and `occurrence`, indexed by data row.

    Raises: ParseError for a repeated column or a truncated last row.
    """
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin.path, origin.expected)
    csvtext.check_last_row(origin, len(header), len(raw) - 1)
    name = "Metric Name" if "Metric Name" in raw else "Event Name"
    frame = raw[["Device", "Kernel", "Invocations", name, "Min", "Max", "Avg"]].astype(object)
    frame = frame.set_axis(LONG, axis=1).set_axis(pd.RangeIndex(len(raw)))
    nameless = np.flatnonzero(frame["kernel"].isna().to_numpy())
    if len(nameless):
        raise origin.cell_error(int(nameless[0]), "Kernel", "no kernel name")
    return _blocks(frame.assign(device=frame["device"].fillna("")), origin)


def _blocks(
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
        shown = values.shown_cell(str(frame["metric"].iloc[again[0]]), 80)
        raise origin.error(f"line {origin.line(row)}: {shown} again for the same kernel")
    return frame


def contributions(rows: pd.DataFrame, origin: Origin) -> pd.DataFrame:
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
            per_name = np.array([_weight(source, str(m)) for m in names] + [None], dtype=float)
            weight = pd.Series(per_name[codes], index=rows.index)
            picked = rows[weight.notna().to_numpy()]
            if len(picked):
                weights = weight[weight.notna()]
                for column in ("min", "max"):  # checked, not kept: a cut row fails here
                    _avg(picked[column], weights, field, origin, column.title())
                number = _avg(picked["avg"], weights, field, origin)
                found.append(picked.assign(field=field, rank=rank, value=number))
    if not found:
        return pd.DataFrame(columns=[*KEY, "field", "rank", "metric", "value"])
    return pd.concat(found)[[*KEY, "field", "rank", "metric", "value"]]


def _weight(source: Source, metric: str) -> float | None:
    """The weight of `metric` in `source`, None when it is not one of its metrics."""
    sectors = _FB_SECTORS.match(metric)
    if sectors is not None:
        metric = f"fb_{sectors['way']}_sectors"
    return dict(source.weights).get(metric)


def _avg(
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


def metrics_table(
    kernels: pd.DataFrame, found: pd.DataFrame, metrics: list[str], stage: str, origin: Origin
) -> pd.DataFrame:
    """Per kernel, each field from its best complete source.

    Args:
        kernels: `KEY` of every kernel the file lists, in order.
        found: `contributions` of every table.
        metrics: the names of every metric and event the file has (for the refusal).
        stage: the stage key of every row.
        origin: the file (for messages).

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel.

    Raises: ParseError when no metric maps to a column, or a sum leaves the range of int64.
    """
    best = _best(found)
    if best.empty:
        shown = ", ".join(metrics[:6]) + (", ..." if len(metrics) > 6 else "")
        raise origin.error(
            f"nvprof metrics/events for {len(kernels)} kernel(s), but none of them ({shown}) is "
            f"one profgen's metrics table holds ({KNOWN})"
        )
    wide = best.pivot_table(index=KEY, columns="field", values="value")
    table = kernels.merge(wide.reset_index(), on=KEY, how="left", sort=False)
    for field in _COUNT_FIELDS + _PCT_FIELDS:
        if field not in table:
            table[field] = np.nan
    _check_sums(table, origin)
    out = table.assign(
        stage=stage,
        kernel_id=np.arange(len(table), dtype="int64"),
        name=_capped(table["kernel"]),
        **{f: values.whole(table[f].astype("float64")) for f in _COUNT_FIELDS},
    )
    fill = ("range", "grid", "block", "duration_ns", "registers")
    return schema.validate(schema.conform(out, schema.METRICS, fill=fill), schema.METRICS)


def _capped(kernels: pd.Series) -> pd.Series:
    """`values.cap_names` of the kernel names as text, each distinct name capped once."""
    codes, names = pd.factorize(kernels, use_na_sentinel=False)
    capped = values.cap_names(pd.Series(names, dtype="string")).to_numpy(dtype=object)
    return pd.Series(capped[codes], index=kernels.index, dtype="string")


def _best(found: pd.DataFrame) -> pd.DataFrame:
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


def _check_sums(table: pd.DataFrame, origin: Origin) -> None:
    """Summed counts stay below `values.LIMIT` (each term was checked on its own).

    Raises: ParseError naming the kernel and the field.
    """
    for field in _COUNT_FIELDS:
        big = np.flatnonzero(table[field].to_numpy(dtype="float64") >= values.LIMIT)
        if len(big):
            name = values.shown_cell(str(table["kernel"].iloc[big[0]]), 80)
            raise origin.error(f"kernel {name}: {field} adds up past 2**62")

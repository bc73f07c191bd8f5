"""nvprof's `--metrics` and `--events` output, text and `--csv`, -> `schema.METRICS`.

nvprof reports a metric or event per kernel, over all of its launches (`Invocations`), as Min,
Max and Avg (events also as Total, in later versions):

- text: `Invocations  Metric Name  Metric Description  Min  Max  Avg` (or `Invocations  Event
  Name  Min  Max  Avg[  Total]`), then `Device "TITAN Xp (0)"` and `Kernel: <name>` lines above
  each kernel's rows. A description holds spaces; a value may be a level with a space (`Low (3)`,
  `Idle (0)`), so a row is read from both ends.
- `--csv`: `"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"`
  (or `"Event Name"` without a description, with or without `"Total"`).

Each table's rows (`nvprof_metric_rows.Rows`: codes for kernels and metrics, cells as spans of
the text) come from `nvprof_metrics_text.text_rows` (most rows of a million-row table cut with
NumPy) or `csv_rows`; numbers are read all at once where they are plain decimals.

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
`block` and `registers` are missing too.

Every row, mapped or not, is also a row of `schema.COUNTERS` as nvprof printed it
(`nvprof_counters`), with its kernel's `kernel_id`: a file none of whose metrics maps has
`counters` and no `metrics` table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import bounded_names, cell_quotes, csvtext, nvprof_counters, values
from profiler.parse.nvprof_metric_rows import Cells, Rows, blocks
from profiler.parse.nvprof_metrics_text import text_rows as text_rows  # (nvprof reads it here)
from profiler.parse.table_origin import Origin

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
_FIELDS = list(_SOURCES)
_RANKS = max(len(s) for s in _SOURCES.values())
_NEED = np.array(  # per field and rank: how many metrics a complete source has
    [
        [len(s.weights) if s.whole else 1 for s in sources] + [0] * (_RANKS - len(sources))
        for sources in _SOURCES.values()
    ],
    dtype="int64",
)


def csv_rows(origin: Origin) -> Rows:
    """The rows of one `--csv` metric or event table.

    Raises: ParseError for a repeated or missing column, a truncated last row, a row without a
        kernel name or a metric listed twice for one kernel.
    """
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin)
    csvtext.check_last_row(origin, len(header), len(raw) - 1)
    name = "Metric Name" if "Metric Name" in raw else "Event Name"
    wanted = ["Device", "Kernel", "Invocations", name, "Min", "Max", "Avg"]
    missing = [c for c in wanted if c not in raw]
    if missing:  # a header cut short (a paste or a truncated file)
        raise origin.error(f"no column {', '.join(missing)} in its header")
    frame = raw[wanted].astype(object)
    frame = frame.set_axis(LONG, axis=1).set_axis(pd.RangeIndex(len(raw)))
    nameless = np.flatnonzero(frame["kernel"].isna().to_numpy())
    if len(nameless):
        raise origin.cell_error(int(nameless[0]), "Kernel", "no kernel name")
    device, devices = pd.factorize(frame["device"].fillna(""))
    kernel, kernels = pd.factorize(frame["kernel"])
    metric, metrics = pd.factorize(frame["metric"], use_na_sentinel=False)
    at = np.arange(len(frame), dtype="int64")
    names = [str(m) for m in metrics]
    codes = (device.astype("int64"), kernel.astype("int64"), metric.astype("int64"))
    return Rows(
        origin,
        at,
        codes[0],
        [str(d) for d in devices],
        codes[1],
        [str(k) for k in kernels],
        codes[2],
        names,
        blocks(origin, at, codes, names),
        {c: Cells.objects(frame[c].tolist()) for c in ("invocations", "min", "max", "avg")},
    )


def table(tables: list[Rows], stage: str, origin: Origin) -> dict[str, pd.DataFrame]:
    """The rows of every metric and event table of a file -> its `counters` (every row) and,
    when some of its metrics map, its `metrics` (a row per kernel).

    Returns: `counters` with `schema.COUNTERS` columns, in file order, and `metrics` with
        `schema.METRICS` columns, one row per kernel (device, name and occurrence), in the
        order the file lists them; a counter's `kernel_id` is its kernel's.

    Raises: ParseError for a bad Invocations cell, a bad Min, Max or Avg cell of a mapped
        metric, or as `metrics_table`.
    """
    read = [contributions(rows) for rows in tables]
    found = [f for f, _ in read]
    names: dict[str, int] = {}
    devices: dict[str, int] = {}
    kernel_names: dict[str, int] = {}
    keys, metric = [], []
    for rows in tables:
        dev = np.array([devices.setdefault(d, len(devices)) for d in rows.devices], dtype="int64")
        ker = [kernel_names.setdefault(k, len(kernel_names)) for k in rows.kernels]
        met = [names.setdefault(m, len(names)) for m in rows.metrics]
        keys.append((dev[rows.device], np.array(ker, dtype="int64")[rows.kernel], rows.occurrence))
        metric.append(np.array(met, dtype="int64")[rows.metric])
    device, kernel, occurrence = (np.concatenate([k[i] for k in keys]) for i in range(3))
    pair = pd.factorize(device * (len(kernel_names) + 1) + kernel)[0].astype("int64")
    index, firsts = pd.factorize(pair * (int(occurrence.max(initial=0)) + 1) + occurrence)
    capped = bounded_names.cap_names(pd.Series(list(kernel_names), dtype="string")).tolist()
    out = {
        schema.COUNTERS.name: nvprof_counters.counters(
            tables,
            (index.astype("int64"), kernel, capped),
            (np.concatenate(metric), list(names)),
            np.concatenate([i for _, i in read]),
            stage,
        )
    }
    if not any(len(f) for f in found):
        return out
    sizes = np.cumsum([0] + [len(rows.at) for rows in tables])
    rows_found = pd.concat(
        [f.assign(row=f["row"] + sizes[i]) for i, f in enumerate(found)], ignore_index=True
    )
    picked = rows_found["row"].to_numpy(dtype="int64")
    every = rows_found.assign(kernel=index[picked], metric=np.concatenate(metric)[picked])
    order = np.empty(len(firsts), dtype="int64")  # each kernel's first row
    order[index[::-1]] = np.arange(len(index))[::-1]
    got = metrics_table((list(kernel_names), kernel[order]), every, stage, origin)
    return out if got is None else {schema.METRICS.name: got, **out}


def contributions(rows: Rows) -> tuple[pd.DataFrame, np.ndarray]:
    """Every row that feeds a column of `schema.METRICS`, its Avg read and weighted; and every
    row's Invocations.

    Returns: DataFrame of `row` (the row's position), `field` (a `_SOURCES` key), `rank` (the
        source's place, best 0) and `value`; the Invocations, a float per row (NaN: missing).

    Raises: ParseError naming the line and column of an Invocations, Min, Max or Avg cell that
        is no number in range.
    """
    everyone = np.arange(len(rows.at))
    invocations = _numbers(rows, "invocations", everyone, "Invocations", values.COUNT, None, False)
    found = []
    for field, sources in _SOURCES.items():
        for rank, source in enumerate(sources):
            per_name = np.array([_weight(source, m) for m in rows.metrics] + [None], dtype=float)
            weight = per_name[rows.metric]
            which = np.flatnonzero(~np.isnan(weight))
            if len(which):
                pct = field in _PCT_FIELDS
                for column in ("min", "max"):  # checked, not kept: a cut row fails here
                    _numbers(rows, column, which, column.title(), values.VALUE, weight[which], pct)
                number = _numbers(rows, "avg", which, "Avg", values.VALUE, weight[which], pct)
                part = {"row": which, "field": _FIELDS.index(field), "rank": rank, "value": number}
                found.append(pd.DataFrame(part))
    if not found:
        return pd.DataFrame({"row": [], "field": [], "rank": [], "value": []}), invocations
    return pd.concat(found, ignore_index=True), invocations


def _weight(source: Source, metric: str) -> float | None:
    """The weight of `metric` in `source`, None when it is not one of its metrics."""
    sectors = _FB_SECTORS.match(metric)
    if sectors is not None:
        metric = f"fb_{sectors['way']}_sectors"
    return dict(source.weights).get(metric)


def _numbers(
    rows: Rows,
    column: str,
    which: np.ndarray,
    title: str,
    rule: values.Rule,
    weight: np.ndarray | None,
    pct_field: bool,
) -> np.ndarray:
    """The `column` cells of rows `which` as `values.numbers` reads them (NaN: missing), times
    `weight` (None: the cells as they are, as Invocations are read). With a weight, a cell is
    read as Min, Max and Avg are: `97.19%` is a percentage as it stands when `pct_field`, and
    `Low (3)` is 3. Plain decimals are read all at once (`tokens.decimals`); only the other
    cells one by one.

    Raises: ParseError naming the line and column of the first cell that is no number (any),
        else of the first that `rule` does not allow.
    """
    cells = rows.cells[column]
    number, plain = cells.plain(which)
    factor = np.ones(len(which)) if weight is None else weight.astype("float64")
    other = np.flatnonzero(~plain)
    if len(other):
        shown = cells.pick(which[other])
        texts: list[object] = shown
        if weight is not None:
            texts, pct = _avg_texts(shown, pct_field)
            factor[other[pct]] = 1.0
        got, present = values.parsed(texts)  # type: ignore[arg-type]
        bad = np.flatnonzero(np.isnan(got) & present)
        if len(bad):
            row = int(rows.at[which[other[bad[0]]]])
            cell = cell_quotes.shown_cell(shown[bad[0]])  # type: ignore[arg-type]
            raise rows.origin.cell_error(row, title, f"{cell} is not a number")
        number[other] = got
    index = pd.Index(rows.at[which], dtype="int64")
    shown_at = lambda i: cells.pick(which[i : i + 1])[0]  # noqa: E731
    return values.checked(number, index, rows.origin, title, rule, factor, shown_at).to_numpy()


def _avg_texts(cells: list[object], pct_field: bool) -> tuple[list[object], np.ndarray]:
    """Min, Max or Avg cells -> the text of their numbers: `97.19%` -> `97.19` when `pct_field`
    (and which cells those are), `Low (3)` -> `3`."""
    text = [str(cell).strip() for cell in cells]
    number: list[object] = list(text)
    pct = np.zeros(len(text), dtype=bool)
    for i, t in enumerate(text):
        if t[-1:] == "%" and pct_field:
            number[i], pct[i] = t[:-1], True
        elif t[-1:] == ")" and "(" in t:  # a level: `Low (3)`
            number[i] = t.rpartition("(")[2].removesuffix(")")
    return number, np.flatnonzero(pct)


def metrics_table(
    kernels: tuple[list[str], np.ndarray], found: pd.DataFrame, stage: str, origin: Origin
) -> pd.DataFrame | None:
    """Per kernel, each field from its best complete source.

    Args:
        kernels: the kernel names, and each kernel's name as a position in them, for every
            kernel the file lists, in order (a kernel is a device, a name and an occurrence).
        found: `contributions` of every table, with `kernel` (a kernel's position) and `metric`
            (a metric's code) for `row`.
        stage: the stage key of every row.
        origin: the file (for messages).

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel; None when no field
        has a complete source (the file's metrics are in `counters` only).

    Raises: ParseError when a sum leaves the range of int64.
    """
    names, name_of = kernels
    best = _best(found)
    if not len(best["kernel"]):
        return None
    fields = {}
    for k, field in enumerate(_FIELDS):
        column = np.full(len(name_of), np.nan)
        mine = best["field"] == k
        column[best["kernel"][mine]] = best["value"][mine]
        fields[field] = column
    _check_sums(names, name_of, fields, origin)
    capped = bounded_names.cap_names(pd.Series(names, dtype="string")).to_numpy(dtype=object)
    out = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": np.arange(len(name_of), dtype="int64"),
            "name": pd.Series(capped[name_of], dtype="string"),
            **{f: values.whole(pd.Series(fields[f])) for f in _COUNT_FIELDS},
            **{f: fields[f] for f in _PCT_FIELDS},
        }
    )
    fill = ("range", "grid", "block", "duration_ns", "registers")
    return schema.validate(schema.conform(out, schema.METRICS, fill=fill), schema.METRICS)


def _best(found: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per kernel and field, the summed value of the best-ranked source that is complete: a
    `kernel`, `field` and `value` each."""
    kernel = found["kernel"].to_numpy(dtype="int64")
    field = found["field"].to_numpy(dtype="int64")
    rank = found["rank"].to_numpy(dtype="int64")
    group, firsts = pd.factorize((kernel * len(_FIELDS) + field) * _RANKS + rank)
    sums = found["value"].groupby(group, sort=False).sum().to_numpy(dtype="float64")
    metric = found["metric"].to_numpy(dtype="int64")
    pairs = pd.unique(group.astype("int64") * (int(metric.max(initial=0)) + 1) + metric)
    distinct = np.bincount(pairs // (int(metric.max(initial=0)) + 1), minlength=len(firsts))
    kernel, rest = np.divmod(firsts, len(_FIELDS) * _RANKS)
    field, rank = np.divmod(rest, _RANKS)
    complete = distinct >= _NEED[field, rank]
    order = np.flatnonzero(complete)[np.argsort(rank[complete], kind="stable")]
    order = order[~pd.Series(kernel[order] * len(_FIELDS) + field[order]).duplicated().to_numpy()]
    return {"kernel": kernel[order], "field": field[order], "value": sums[order]}


def _check_sums(
    names: list[str], name_of: np.ndarray, fields: dict[str, np.ndarray], origin: Origin
) -> None:
    """Summed counts stay below `values.LIMIT` (each term was checked on its own); kernel k is
    called `names[name_of[k]]`.

    Raises: ParseError naming the kernel and the field.
    """
    for field in _COUNT_FIELDS:
        big = np.flatnonzero(fields[field] >= values.LIMIT)
        if len(big):
            name = cell_quotes.shown_cell(str(names[name_of[big[0]]]), 80)
            raise origin.error(f"kernel {name}: {field} adds up past 2**62")

"""A collected stage's files (`profiler.collect.runner.StageOutcome`) -> its tables.

Reads what the worker and the profilers wrote into the stage's raw folder: the worker's
`result.json` (stages and samples rows), the CUPTI record file, the `nsys stats` CSV files,
the Nsight Compute CSV. A batch-sweep outcome gives one `batch_sweep` row instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler import schema
from profiler.collect.stagejob import StageOutcome
from profiler.errors import ParseError
from profiler.parse import cupti, ncu_csv, nsys_csv, worker


def parse_outcome(outcome: StageOutcome, order: int | None) -> dict[str, pd.DataFrame]:
    """The tables of one stage. `order` is the stage's place in the study; None for a
    batch-sweep outcome.

    Returns: tables by schema name (`stages`, `samples`, and the traces, summaries and metrics
    the backends wrote), or `{"batch_sweep": ...}` for a batch-sweep outcome.
    Raises: ParseError naming the file that could not be read.
    """
    if order is None:
        return {schema.BATCH_SWEEP.name: batch_row(worker.read_result(outcome.files["result"]))}
    stages, samples = worker.read(outcome.files["result"], order)
    facts = worker.layers(outcome.files["result"])
    extra = {} if facts is None else {schema.LAYERS.name: facts}
    try:
        return {schema.STAGES.name: stages, schema.SAMPLES.name: samples, **extra,
                **profiles(outcome)}
    except ParseError as exc:  # the stage ran, but its profile cannot be read: say so, go on
        stages = stages.assign(
            status=schema.ERROR, reason=worker.one_line(f"profiler output unreadable: {exc}")
        )
        return {schema.STAGES.name: stages, schema.SAMPLES.name: samples, **extra}


def profiles(outcome: StageOutcome) -> dict[str, pd.DataFrame]:
    """The traces, tool summaries and metrics the backends wrote for one stage.

    Raises: ParseError naming the file that could not be read.
    """
    stage = outcome.job.key
    tables: dict[str, pd.DataFrame] = {}
    if "cupti" in outcome.files:
        gpu, api, ranges = cupti.read_traces(outcome.files["cupti"], stage)
        tables.update(gpu_trace=gpu, api_trace=api, range_trace=ranges)
    if any(key.startswith("nsys:") for key in outcome.files):
        tables.update(nsys_csv.read_stats_dir(outcome.raw_dir, stage))
    if "ncu" in outcome.files:
        tables[schema.METRICS.name] = ncu_csv.read_metrics(outcome.files["ncu"], stage)
    return tables


def batch_row(result: dict) -> pd.DataFrame:
    """One `batch_sweep` row: the time for all items at this batch size, and the mean latency
    of one `infer` call (the pass's time over its number of calls).

    Returns: DataFrame with `schema.BATCH_SWEEP` columns (empty when the pass did not run).
    """
    timed = np.asarray(result.get("timed_ns") or [], dtype=np.int64)
    if result.get("status") != schema.PASS or not len(timed):
        return schema.empty(schema.BATCH_SWEEP)
    items, batch = int(result["items"]), int(result["batch"])
    median = int(np.median(timed))
    calls = -(-items // batch)
    row = {
        "stage": [result["stage"]],
        "batch": [batch],
        "items": [items],
        "repeats": [len(timed)],
        "median_ns": [median],
        "min_ns": [int(timed.min())],
        "max_ns": [int(timed.max())],
        "batch_median_ns": [median // calls],
    }
    return schema.validate(
        schema.conform(pd.DataFrame(row), schema.BATCH_SWEEP), schema.BATCH_SWEEP
    )

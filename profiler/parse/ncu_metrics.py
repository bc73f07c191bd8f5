"""The ncu metrics profgen maps to `schema.METRICS`: the names each field goes by (raw metric
names, then the details page's section display names of each ncu version), their units, and
the table of launches their values make (`metrics_table`), for the CSV and text readers.

Units are converted (`usecond` -> ns, `Kbyte` -> bytes with SI prefixes, as ncu uses). A metric
the file lacks is NA, not an error.

FP32 FLOPs are 2 * ffma + fadd + fmul thread instructions executed (predicated on).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import bounded_names, csvtext, values
from profiler.parse.table_origin import Origin

_SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
# field -> (unit kind, names it goes by: raw metric names first, then details-page names)
METRICS = {
    "duration_ns": ("time", ("gpu__time_duration.sum", "Duration")),
    # compute capability 12.x (GB20x) names them dram__bytes_op_*: its ncu has no dram__bytes_read
    "dram_read_bytes": ("bytes", ("dram__bytes_read.sum", "dram__bytes_op_read.sum")),
    "dram_write_bytes": ("bytes", ("dram__bytes_write.sum", "dram__bytes_op_write.sum")),
    "ffma": ("count", (_SASS.format("ffma"),)),
    "fadd": ("count", (_SASS.format("fadd"),)),
    "fmul": ("count", (_SASS.format("fmul"),)),
    "sm_throughput_pct": (
        "pct",
        (
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "Compute (SM) Throughput",
            "Compute (SM) [%]",  # 2021.x-2022.1
            "SM [%]",  # 2019.x-2020.x
        ),
    ),
    "dram_throughput_pct": (
        "pct",
        (
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "DRAM Throughput",
            "SOL DRAM",  # 2020.x
            # 2019.3.1-2020.x: "Switched underlying metric for SOL FB in the GPU Speed Of Light
            # section to be driven by dram__throughput.avg.pct_of_peak_sustained_elapsed instead
            # of fbpa__throughput..." (ncu 2019.3.1's release notes, docs.nvidia.com/
            # nsight-compute/2019.3/ReleaseNotes). 2019.1-2019.3 printed the latter as SOL FB.
            "SOL FB",
        ),
    ),
    "achieved_occupancy_pct": (
        "pct",
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"),
    ),
    "registers": ("count", ("launch__registers_per_thread", "Registers Per Thread")),
}


RULES = {"time": values.TIME, "bytes": values.SIZE, "count": values.COUNT, "pct": values.VALUE}


def metrics_table(
    launches: pd.DataFrame,
    found: dict[str, pd.Series],
    stage: str,
    origin: Origin,
    ranges: pd.Series | None = None,
) -> pd.DataFrame:
    """Launches (`ID`, `Kernel Name`, optional `Grid Size`, `Block Size`), their ranges and
    the metric values found for them, by field -> `schema.METRICS`, by launch ID.

    Raises: ParseError for a launch without ID or name, or FLOPs or durations past 2**62.
    """
    if "ID" not in launches or "Kernel Name" not in launches:
        raise origin.error("no ID or Kernel Name column")
    ids = values.numbers(launches["ID"], origin, "ID", values.COUNT)
    if ids.isna().any() or launches["Kernel Name"].isna().any():
        raise origin.error("a row has no launch ID or kernel name (truncated file?)")
    nan = pd.Series(np.nan, index=launches.index)
    get = {f: found.get(f, nan).reset_index(drop=True) for f in METRICS}
    get["fp32_flops"] = 2 * get["ffma"] + get["fadd"] + get["fmul"]
    for field in ("fp32_flops", "duration_ns"):
        if (get[field] >= values.LIMIT).any():
            raise origin.error(f"the {field} of a launch is past 2**62")
        values.check_total(get[field], origin, field)
    labels = {
        "name": launches["Kernel Name"],
        "range": ranges,
        "grid": launches.get("Grid Size"),
        "block": launches.get("Block Size"),
    }
    text = {
        k: pd.NA if v is None else bounded_names.cap_names(v.astype("string"))
        for k, v in labels.items()
    }
    out = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": ids.astype("int64"),
            **text,
            **{
                f: values.whole(get[f])
                for f in (
                    "fp32_flops",
                    "duration_ns",
                    "dram_read_bytes",
                    "dram_write_bytes",
                    "registers",
                )
            },
            **{
                f: get[f]
                for f in ("sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct")
            },
        }
    )
    out = schema.conform(out.sort_values("kernel_id", kind="stable"), schema.METRICS)
    return schema.validate(out, schema.METRICS)


def unit_factor(kind: str, unit: str, path: Path, column: str) -> float:
    """Nanoseconds (time) or bytes (bytes) per `unit`; 1 for counts and percentages.

    Raises: ParseError for a unit that is not of its kind.
    """
    if kind == "time":
        return csvtext.time_factor(unit, path, column)
    if kind == "bytes":
        return csvtext.byte_factor(unit, path, column)
    return 1

"""nvprof summaries of programs that launch kernels from the GPU (dynamic parallelism), whose
header splits `Calls` into `Calls (host)  Calls (device)`: checked against the real file,
expected values read from its text here, not from the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler import schema
from profiler.parse import nvprof

CDP = Path(__file__).parent / "data" / "nvprof" / "9.x" / "cdp-maxmin-calls-host-device.cu"
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def _ns(cell: str) -> float:
    unit = next(u for u in ("ns", "us", "ms", "s") if cell.endswith(u))
    return float(cell[: -len(unit)]) * UNITS[unit]


def _rows(kind: str) -> list[list[str]]:
    """The file's rows of one section (`GPU activities`, `API calls`): share, time, host
    calls, device calls, avg, min, max, name."""
    found, current = [], None
    for line in CDP.read_text().splitlines():
        body = line.strip()
        head, sep, rest = body.partition(":")
        if sep and head in ("GPU activities", "API calls"):
            current, body = head, rest.strip()
        if current == kind and body[:1].isdigit() and "%" in body.split()[0]:
            found.append(body.split(None, 7))
    return found


def test_split_calls_are_summed_and_the_times_read_as_written():
    """Each kernel's calls are its host plus its device launches (nvprof's Avg is the time
    over both); copies and API rows (`-` for the device) keep the host's."""
    tables = nvprof.read_log(CDP, "s")
    gpu = schema.validate(tables["gpu_activities"], schema.GPU_ACTIVITIES)
    rows = _rows("GPU activities")
    assert len(rows) == 6
    assert list(gpu["name"]) == [r[7] for r in rows]
    calls = [int(r[2]) + (0 if r[3] == "-" else int(r[3])) for r in rows]
    assert list(gpu["calls"]) == calls == [20751, 24577, 24577, 1, 4, 4]
    assert list(gpu["total_ns"]) == pytest.approx([_ns(r[1]) for r in rows])
    assert list(gpu["avg_ns"]) == pytest.approx([_ns(r[4]) for r in rows])
    merge = gpu[gpu["name"] == "maxMin(int*, int*, int*, int*, unsigned int)"].iloc[0]
    assert merge["total_ns"] / merge["calls"] == pytest.approx(merge["avg_ns"], rel=1e-4)
    api = tables["api_calls"]
    api_rows = _rows("API calls")
    assert dict(zip(api["name"], api["calls"], strict=True)) == {r[7]: int(r[2]) for r in api_rows}
    assert api[api["name"] == "cudaMalloc"]["total_ns"].tolist() == [254_530_000]

"""`profgen doctor`: its checks, each returning `Check`s, their report, and the tiny probe program.

`python -m profiler.collect.doctor` runs one small CuPy kernel and a copy inside a profgen range:
the program `nsys profile` and `ncu` are tried on.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from profiler.collect import env
from profiler.collect import ncu as ncu_mod
from profiler.collect import nsys as nsys_mod
from profiler.collect.tools import hint_for, run_tool
from profiler.errors import ProfgenError, ProfilerRunError, ToolNotFound

PROBE_TIMEOUT_S = 180.0
_LIBDW_FIX = (
    "install libdw1 (apt-get install libdw1), or unpack it and put its folder on LD_LIBRARY_PATH"
)


@dataclass(frozen=True)
class Check:
    """One line of `profgen doctor`: what was checked, whether it works, what was seen, the fix."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = False  # True for what the default (cupti) backend needs


def doctor(probe: bool = True) -> list[Check]:
    """Check the CUDA device, CuPy, cupti-python (by tracing a tiny kernel in a child process),
    nsys (its report importer's libraries; with `probe`, a tiny `nsys profile` + `nsys stats`)
    and ncu (whether it may read the GPU's counters; with `probe`, one tiny profiled kernel)."""
    checks = [check_cuda(), check_package("nvtx", "nvtx", required=False)]
    checks.append(check_cupti(cuda_ok=checks[0].ok))
    checks += check_nsys(probe=probe and checks[0].ok)
    checks += check_ncu(probe=probe and checks[0].ok)
    return checks


def format_checks(checks: list[Check]) -> str:
    """The doctor's report: one line per check, its fix indented below, and a verdict."""
    lines = []
    for c in checks:
        lines.append(f"{'ok  ' if c.ok else 'FAIL'}  {c.name:<14} {c.detail}")
        if c.fix and not c.ok:
            lines.append(f"      {'':<14} fix: {c.fix}")
    backends = [
        "cupti" if cupti_works(checks) else None,
        "nsys" if _ok(checks, "nsys") else None,
        "ncu (--metrics)" if _ok(checks, "ncu") else None,
    ]
    usable = [b for b in backends if b]
    lines.append("")
    lines.append(f"backends that work here: {', '.join(usable) if usable else 'none'}")
    return "\n".join(lines)


def _ok(checks: list[Check], prefix: str) -> bool:
    """True when there are checks named `prefix...` and all of them passed."""
    mine = [c for c in checks if c.name.startswith(prefix)]
    return bool(mine) and all(c.ok for c in mine)


def cupti_works(checks: list[Check]) -> bool:
    """True when the default backend (cupti) can run: every required check passed."""
    required = [c for c in checks if c.required]
    return bool(required) and all(c.ok for c in required)


def check_cuda() -> Check:
    state = env.cuda_state()
    if "error" in state:
        return Check(
            "CUDA device",
            False,
            f"no CUDA device was found: {state['error']}",
            state["fix"],
            required=True,
        )
    smi = env._nvidia_smi() or {}
    detail = (
        f"{smi.get('name', 'GPU')} x{state['devices']}, driver {smi.get('driver_version', '?')}, "
        f"CUDA runtime {env._cuda_version(state['runtime'])} / driver "
        f"{env._cuda_version(state['driver'])}, CuPy {state['cupy'] or 'not installed'}"
    )
    return Check("CUDA device", True, detail, required=True)


def check_package(name: str, dist: str, required: bool) -> Check:
    version = env._version(dist)
    if version is None:
        return Check(
            name,
            False,
            "not installed (nsys and ncu will not see profgen's ranges)",
            f"pip install {dist}",
            required=required,
        )
    return Check(name, True, f"{dist} {version}", required=required)


def check_cupti(cuda_ok: bool) -> Check:
    """cupti-python installed, and (with a device) able to trace a kernel in a child process."""
    version = env._version("cupti-python")
    if version is None:
        return Check(
            "cupti",
            False,
            "cupti-python is not installed",
            "pip install cupti-python (the version of the driver's CUDA, e.g. 13.0.x)",
            required=True,
        )
    if not cuda_ok:
        return Check(
            "cupti",
            False,
            f"cupti-python {version}, but there is no CUDA device",
            "see the CUDA device check",
            required=True,
        )
    try:
        seen = env.run_json_probe("profiler.collect.cupti")
    except ProfgenError as exc:
        return Check(
            "cupti",
            False,
            f"cupti-python {version} could not trace: {exc}",
            "use the cupti-python release matching the driver's CUDA major version",
            required=True,
        )
    rec = seen["records"]
    ok = rec.get("kernel", 0) > 0 and rec.get("memcpy", 0) > 0 and rec.get("range", 0) >= 2
    detail = (
        f"cupti-python {version}: traced {rec.get('kernel', 0)} kernels, "
        f"{rec.get('memcpy', 0)} copies, {rec.get('runtime', 0) + rec.get('driver', 0)} API calls"
    )
    return Check(
        "cupti",
        ok,
        detail,
        "" if ok else "CUPTI returned no records: run with a supported GPU and driver",
        required=True,
    )


def check_nsys(probe: bool) -> list[Check]:
    """nsys found; its importer's libraries resolve; with `probe`, profile + stats really work."""
    try:
        nsys = nsys_mod.find_nsys()
        version = nsys_mod.version(nsys)
    except ToolNotFound as exc:
        return [Check("nsys", False, str(exc))]
    checks = [Check("nsys", True, f"{version} at {nsys}")]
    importer = nsys_mod.importer(nsys)
    if importer is not None:
        missing = nsys_mod.missing_libraries(importer)
        if missing:
            checks.append(
                Check(
                    "nsys importer",
                    False,
                    f"{importer.name} cannot load {', '.join(missing)}: nsys profile "
                    "would write only a .qdstrm and nsys stats would refuse it",
                    _LIBDW_FIX
                    if any("libdw" in m for m in missing)
                    else f"install the libraries that provide {', '.join(missing)}",
                )
            )
            return checks
        checks.append(Check("nsys importer", True, f"{importer} finds its libraries"))
    if probe:
        checks.append(_probe_nsys(nsys))
    return checks


def _probe_nsys(nsys: Path) -> Check:
    with tempfile.TemporaryDirectory(prefix="profgen-doctor-") as tmp:
        base = Path(tmp) / "probe"
        program = [sys.executable, "-m", "profiler.collect.doctor"]
        try:
            run_tool(
                nsys_mod.profile_cmd(nsys, base, program, capture_range=False),
                Path(tmp) / "nsys.log",
                PROBE_TIMEOUT_S,
                cwd=env.PROJECT_ROOT,
            )
            report = base.with_suffix(".nsys-rep")
            if not report.is_file():
                return Check(
                    "nsys profile",
                    False,
                    "nsys profile wrote no .nsys-rep",
                    hint_for("Unable to retrieve the importer version"),
                )
            out = Path(tmp) / "stats"
            run_tool(
                nsys_mod.stats_cmd(nsys, report, out, ("cuda_gpu_kern_sum",)),
                Path(tmp) / "stats.log",
                PROBE_TIMEOUT_S,
            )
        except ProfilerRunError as exc:
            return Check("nsys profile", False, str(exc).splitlines()[0], exc.hint)
        csv = nsys_mod.stats_outputs(out, ("cuda_gpu_kern_sum",))["cuda_gpu_kern_sum"]
        ok = csv.is_file() and len(csv.read_text().splitlines()) > 1
        return Check(
            "nsys profile",
            ok,
            "a tiny nsys profile + nsys stats produced kernel rows"
            if ok
            else "nsys stats found no kernel in the probe's report",
        )


def check_ncu(probe: bool) -> list[Check]:
    """ncu found; whether this user may read counters; with `probe`, one kernel really profiled."""
    try:
        ncu = ncu_mod.find_ncu()
        version = ncu_mod.version(ncu)
    except ToolNotFound as exc:
        return [Check("ncu", False, str(exc))]
    checks = [Check("ncu", True, f"{version} at {ncu}")]
    if _admin_only() and os.geteuid() != 0:
        checks.append(
            Check(
                "ncu counters",
                False,
                "the driver lets only administrators read GPU "
                "performance counters (RmProfilingAdminOnly=1)",
                hint_for("ERR_NVGPUCTRPERM"),
            )
        )
        return checks
    if probe:
        checks.append(_probe_ncu(ncu))
    return checks


def _admin_only() -> bool:
    params = Path("/proc/driver/nvidia/params")
    text = params.read_text() if params.is_file() else ""
    return "RmProfilingAdminOnly: 1" in text


def _probe_metrics(cc: tuple[int, int] | None) -> tuple[str, ...]:
    """The probe's metrics: the kernel's duration and DRAM's read bytes, as ncu names them at
    compute capability `cc` (none on a GPU without DRAM counters of its own)."""
    dram = [m for m in ncu_mod.metrics_for(cc) if m.startswith("dram__bytes_")]
    return ("gpu__time_duration.sum", *dram[:1])


def _probe_ncu(ncu: Path) -> Check:
    with tempfile.TemporaryDirectory(prefix="profgen-doctor-") as tmp:
        csv = Path(tmp) / "ncu.csv"
        metrics = _probe_metrics(env.compute_capability())
        cmd = ncu_mod.profile_cmd(
            ncu,
            "doctor",
            csv,
            [sys.executable, "-m", "profiler.collect.doctor"],
            metrics=metrics,
        )
        try:
            run_tool(cmd, Path(tmp) / "ncu.log", PROBE_TIMEOUT_S, cwd=env.PROJECT_ROOT)
        except ProfilerRunError as exc:
            text = csv.read_text(errors="replace") if csv.is_file() else ""
            return Check(
                "ncu counters", False, str(exc).splitlines()[0], exc.hint or hint_for(text)
            )
        text = csv.read_text(errors="replace") if csv.is_file() else ""
        if "ERR_NVGPUCTRPERM" in text or "LibraryNotLoaded" in text:
            return Check(
                "ncu counters", False, "ncu may not read the GPU's counters here", hint_for(text)
            )
        ok = metrics[-1] in text
        return Check(
            "ncu counters",
            ok,
            f"ncu read {'DRAM counters' if len(metrics) > 1 else 'the duration'} of a tiny kernel"
            if ok
            else "ncu profiled no kernel of the probe",
            "" if ok else "see `ncu --list-sets`",
        )


def main() -> None:
    """The probe program: one kernel and one copy inside the profgen range `doctor`."""
    import cupy as cp
    import numpy as np

    from profiler import ranges

    x = cp.arange(1 << 16, dtype=cp.float32)
    with ranges.range("doctor"):
        y = cp.asarray(np.ones(1 << 16, np.float32))
        total = float((x * y).sum().get())
    cp.cuda.runtime.deviceSynchronize()
    print(f"probe ok {total:g}")


if __name__ == "__main__":
    main()

"""Run ONE stage in this process: `python -m profiler.collect.worker ...`.

The parent (`profiler.collect.runner`) starts one worker per stage and pass, so a crash, a hang
or a CUDA error takes down only this process. The worker:

1. loads the model, its benchmark images and the float64 reference (cached in `--cache-dir`),
   builds the stage (`--stage KEY` from the registry, or `--stage-ref module:Class`, which tests
   use for stages outside the registry); a stage whose `unavailable()` gives a reason is SKIPPED;
2. `prepare(model, batch)` and `host_input(images)` (not timed);
3. runs the passes named by `--passes`:
   - `timed`: `--warmup` untimed calls, then `--repeat` calls, each timed by the host clock
     (`time.perf_counter_ns`) between two device synchronisations and wrapped in the range
     `<model>:<stage>`;
   - `profiled`: `--profiled-repeats` calls in the stage range, timed the same way, under the
     `--tracer`: `cupti` traces in-process (flushing its records between repeats, outside
     their timing) and writes `cupti.npz` into `--out`; `profiler-api`
     does warm-ups first and brackets the repeats with cudaProfilerStart/Stop (the capture
     range of `nsys profile`); `none` only times them;
   - `metrics`: one warm-up outside the stage range, then one call inside it (what ncu's NVTX
     filter selects), on the first `--metrics-images` images when given, else on the first
     `metrics_images` images when the stage class sets that attribute (per-image stages);
4. checks every call's logits against the reference (`variants.base.check_logits`);
5. writes `--result` (JSON, atomically) and exits 0. Any other exit means the stage crashed.

Progress goes to stdout as lines `@@profgen {"event": "timed 3/10"}` that the runner forwards.
"""

from __future__ import annotations

import argparse
import faulthandler
import hashlib
import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler import ranges, schema

EVENT_PREFIX = "@@profgen "
RESULT_FORMAT = 1
PASSES = ("timed", "profiled", "metrics")
TRACERS = ("cupti", "profiler-api", "none")


def emit(event: str) -> None:
    """Tell the runner what the worker is doing (one machine-readable stdout line)."""
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": event}) + "\n")
    sys.stdout.flush()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m profiler.collect.worker", description=__doc__.splitlines()[0]
    )
    p.add_argument("--model", required=True)
    p.add_argument("--stage", required=True, help="stage key")
    p.add_argument("--stage-ref", help="module:Class of a stage outside the registry (tests)")
    p.add_argument("--images", type=int, required=True)
    p.add_argument("--batch", type=int, help="images per infer call (default: all)")
    p.add_argument("--data", type=Path, help="IDX file for model.benchmark_images")
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--profiled-repeats", type=int, default=3)
    p.add_argument("--metrics-images", type=int, help="images of the metrics pass (default: all)")
    p.add_argument("--passes", default="timed", help="comma-separated: " + ",".join(PASSES))
    p.add_argument("--tracer", choices=TRACERS, default="none")
    p.add_argument("--out", type=Path, required=True, help="folder for trace files")
    p.add_argument("--result", type=Path, required=True, help="result JSON to write")
    p.add_argument("--cache-dir", type=Path, help="folder keeping reference logits between stages")
    p.add_argument(
        "--timeout",
        type=float,
        default=0.0,
        help="seconds after which the worker dumps its threads' stacks and exits (0: never)",
    )
    args = p.parse_args(argv)
    args.passes = [x for x in args.passes.split(",") if x]
    unknown = set(args.passes) - set(PASSES)
    if unknown or not args.passes:
        p.error(f"--passes: expected some of {', '.join(PASSES)}, got {args.passes}")
    return args


def load_stage_class(model: str, stage: str, stage_ref: str | None) -> type:
    """The stage class: from `module:Class` when given, else from the model's registry."""
    if stage_ref:
        module, _, name = stage_ref.partition(":")
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    from variants.registry import get_model

    return get_model(model).stage_class(stage)


def reference_logits(model: Any, images: np.ndarray, args: argparse.Namespace) -> np.ndarray:
    """The model's float64 logits, read from / kept in `--cache-dir` when given."""
    if args.cache_dir is None:
        return np.asarray(model.reference(images))
    key = f"{args.model}-{len(images)}-{_data_key(args.data)}.npy"
    path = args.cache_dir / key
    if path.is_file():
        ref = np.load(path, allow_pickle=False)
        if ref.shape[0] == len(images):
            return ref
    ref = np.asarray(model.reference(images))
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, ref)
    os.replace(tmp, path)
    return ref


def _data_key(data: Path | None) -> str:
    if data is None:
        return "shipped"
    st = data.stat()
    text = f"{data.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def device_sync(stage: Any) -> Callable[[], None]:
    """A function that waits for the GPU (nothing for CPU stages)."""
    if not getattr(stage, "uses_gpu", True):
        return lambda: None
    import cupy

    return cupy.cuda.runtime.deviceSynchronize  # type: ignore[no-any-return]


def infer_all(stage: Any, x: np.ndarray, batch: int) -> np.ndarray:
    """Logits for every image, `batch` images per `infer` call."""
    if batch >= len(x):
        return np.asarray(stage.infer(x))
    return np.concatenate(
        [np.asarray(stage.infer(x[i : i + batch])) for i in range(0, len(x), batch)]
    )


class Checks:
    """The worst correctness verdict over every checked call."""

    def __init__(self, ref: np.ndarray) -> None:
        from variants.base import check_logits

        self._check = check_logits
        self.ref = ref
        self.max_rel_err = 0.0
        self.top1_mismatches = 0
        self.failures: list[str] = []
        self.calls = 0

    def add(self, out: np.ndarray, what: str, ref: np.ndarray | None = None) -> None:
        verdict = self._check(out, self.ref if ref is None else ref)
        self.calls += 1
        self.max_rel_err = max(self.max_rel_err, verdict.max_rel_err)
        self.top1_mismatches = max(self.top1_mismatches, verdict.top1_mismatches)
        if not verdict.passed:
            self.failures.append(f"{what}: {verdict.reason}")

    def reason(self) -> str:
        """'' when every call passed, else the first failure and how many calls failed."""
        if not self.failures:
            return ""
        more = len(self.failures) - 1
        return self.failures[0] + (
            f" (and {more} more of {self.calls} checked calls)" if more else ""
        )


def timed_calls(
    stage: Any,
    x: np.ndarray,
    batch: int,
    label: str,
    count: int,
    name: str,
    sync: Callable[[], None],
    checks: Checks,
    after_each: Callable[[], None] | None = None,
) -> list[int]:
    """`count` calls, each in the stage range, timed between two synchronisations (ns).

    `after_each` runs after each call, outside its timing (the tracer's flush).
    """
    times = []
    for i in range(count):
        emit(f"{label} {i + 1}/{count}")
        sync()
        t0 = time.perf_counter_ns()
        with ranges.range(name):
            out = infer_all(stage, x, batch)
        sync()
        times.append(time.perf_counter_ns() - t0)
        if after_each is not None:
            after_each()
        checks.add(out, f"{label} call {i + 1}")
    return times


def warm_up(
    stage: Any, x: np.ndarray, batch: int, count: int, sync: Callable[[], None], checks: Checks
) -> None:
    for i in range(count):
        emit(f"warm-up {i + 1}/{count}")
        checks.add(infer_all(stage, x, batch), f"warm-up {i + 1}")
    sync()


def profiled_pass(
    stage: Any,
    x: np.ndarray,
    batch: int,
    args: argparse.Namespace,
    name: str,
    sync: Callable[[], None],
    checks: Checks,
) -> dict[str, Any]:
    """The profiled repeats under the chosen tracer; returns their host times and trace info."""
    info: dict[str, Any] = {"tracer": args.tracer}
    if args.tracer == "cupti":
        from profiler.collect.cupti import CuptiTracer

        tracer = CuptiTracer()
        tracer.start()
        # each repeat's records are handed over between repeats, so that cupti-python's slow
        # per-record work (about 8 us a record) does not run on its thread during the next one
        info["profiled_ns"] = timed_calls(
            stage, x, batch, "profiling", args.profiled_repeats, name, sync, checks, tracer.flush
        )
        emit("saving trace")
        tracer.stop()
        info["records"] = tracer.save(args.out / "cupti.npz")
        info["buffers"] = dict(tracer.paths)
    elif args.tracer == "profiler-api":
        import cupy

        warm_up(stage, x, batch, max(1, args.warmup), sync, checks)
        cupy.cuda.profiler.start()
        info["profiled_ns"] = timed_calls(
            stage, x, batch, "profiling", args.profiled_repeats, name, sync, checks
        )
        cupy.cuda.profiler.stop()
    else:
        info["profiled_ns"] = timed_calls(
            stage, x, batch, "profiling", args.profiled_repeats, name, sync, checks
        )
    return info


def metrics_pass(
    stage: Any, x: np.ndarray, batch: int, name: str, sync: Callable[[], None], checks: Checks
) -> None:
    """One warm-up outside the stage range, then the one call ncu's NVTX filter selects."""
    warm_up(stage, x, batch, 1, sync, checks)
    emit("metrics")
    with ranges.range(name):
        out = infer_all(stage, x, batch)
    sync()
    checks.add(out, "metrics call")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Everything but writing the result: returns the result dict."""
    from variants.registry import get_model

    emit("loading")
    cls = load_stage_class(args.model, args.stage, args.stage_ref)
    result = _base_result(args, cls)
    stage = cls()
    why = stage.unavailable()
    if why:
        return result | {"status": schema.SKIPPED, "reason": why}
    model = get_model(args.model).load()
    images = model.benchmark_images(args.images, args.data)
    limit = args.metrics_images or getattr(cls, "metrics_images", None)  # a stage may ask for it
    if "metrics" in args.passes and limit and limit < len(images):
        images = images[:limit]
        result["notes"].append(f"metrics pass on the first {len(images)} of {args.images} images")
    emit("reference")
    checks = Checks(reference_logits(model, images, args))
    batch = min(args.batch or len(images), len(images))
    result.update(images=len(images), batch=batch)
    emit("prepare")
    stage.prepare(model, batch)
    try:
        _passes(stage, stage.host_input(images), batch, args, result, checks)
    finally:
        stage.close()
    failed = bool(checks.failures)
    return result | {
        "status": schema.FAIL if failed else schema.PASS,
        "reason": checks.reason(),
        "max_rel_err": checks.max_rel_err,
        "top1_mismatches": checks.top1_mismatches,
        "checked_calls": checks.calls,
    }


def _passes(
    stage: Any,
    x: np.ndarray,
    batch: int,
    args: argparse.Namespace,
    result: dict[str, Any],
    checks: Checks,
) -> None:
    name = f"{args.model}:{args.stage}"
    sync = device_sync(stage)
    if "timed" in args.passes:
        warm_up(stage, x, batch, args.warmup, sync, checks)
        result["timed_ns"] = timed_calls(stage, x, batch, "timed", args.repeat, name, sync, checks)
    if "profiled" in args.passes:
        info = profiled_pass(stage, x, batch, args, name, sync, checks)
        result["profiled_ns"] = info.pop("profiled_ns")
        result["trace"] = info
    if "metrics" in args.passes:
        metrics_pass(stage, x, batch, name, sync, checks)


def _base_result(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    return {
        "format": RESULT_FORMAT,
        "model": args.model,
        "stage": args.stage,
        "title": getattr(cls, "title", args.stage),
        "technique": getattr(cls, "technique", ""),
        "uses_gpu": bool(getattr(cls, "uses_gpu", True)),
        "passes": list(args.passes),
        "images": args.images,
        "batch": args.batch or args.images,
        "warmup": args.warmup,
        "repeat": args.repeat,
        "profiled_repeats": args.profiled_repeats,
        "timed_ns": [],
        "profiled_ns": [],
        "notes": [],
        "pid": os.getpid(),
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as JSON at `path` atomically (a temporary file renamed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=_jsonable))
    os.replace(tmp, path)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.timeout > 0:  # a watchdog thread that needs no GIL: works even inside a hung C call
        faulthandler.dump_traceback_later(args.timeout, exit=True)
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    write_json(args.result, result)
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())

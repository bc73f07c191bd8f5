"""Run ONE stage of a study in this process, or describe a study: `python -m
profiler.collect.worker {run,describe} ...`. Only this process imports a study's module.

The parent (`profiler.collect.runner`) starts one worker per stage and pass, so a crash, a hang
or a CUDA error takes down only this process. `describe --study REF` prints the study's stages
as one JSON event line. `run`:

1. loads the study and the stage; a stage whose runtime, needs or `unavailable()` are not met
   here is SKIPPED with the reason;
2. loads the model and the inputs, and the reference (cached across runs, see
   `profiler.collect.refcache`);
3. `prepare(model, batch)` and `host_input(x)` (not timed);
4. runs the passes named by `--passes` (`profiler.collect.harness`): `timed` (`--warmup`
   untimed calls, then `--repeat` timed ones), `profiled` (`--profiled-repeats` calls under
   `--tracer`), `metrics` (one call in the stage range for ncu, on the first `--ncu-items`
   items when given);
5. checks every call's outputs against the reference with the stage's comparison rule, after
   each pass's last call (`harness.Checks.hold`: the timed calls run back to back);
6. writes `--result` (JSON, atomically) and exits 0. Any other exit means the stage crashed.

Progress goes to stdout as lines `@@profgen {"event": "timed 3/10"}` that the runner forwards.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler import files, schema
from profiler.collect import harness
from profiler.collect.harness import Call, Checks, emit
from profiler.study import Stage

RESULT_FORMAT = 2
PASSES = ("timed", "profiled", "metrics")
TRACERS = ("cupti", "profiler-api", "none")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m profiler.collect.worker")
    sub = p.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("describe", help="print the study's stages as JSON")
    d.add_argument("--study", required=True)
    d.add_argument("--model", type=Path, help="also load the model from this file (checks it)")
    m = sub.add_parser("model-file", help="print the path of the study's model file as JSON")
    m.add_argument("--study", required=True)
    r = sub.add_parser("run", help="run one stage")
    r.add_argument("--study", required=True, help="study reference (path.py[:NAME], mod:NAME)")
    r.add_argument("--stage", required=True, help="stage key")
    r.add_argument("--items", type=int, required=True)
    r.add_argument("--batch", type=int, help="items per infer call (default: all)")
    r.add_argument("--data", type=Path, help="the study's --data file")
    r.add_argument("--model", type=Path, help="the study's --onnx model file")
    r.add_argument("--warmup", type=int, default=0)
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--profiled-repeats", type=int, required=True)
    r.add_argument("--ncu-items", type=int, help="items of the metrics pass (default: all)")
    r.add_argument("--passes", default="timed", help="comma-separated: " + ",".join(PASSES))
    r.add_argument("--tracer", choices=TRACERS, default="none")
    r.add_argument("--out", type=Path, required=True, help="folder for trace files")
    r.add_argument("--result", type=Path, required=True, help="result JSON to write")
    r.add_argument("--timeout", type=float, default=0.0, help="watchdog seconds (0: never)")
    args = p.parse_args(argv)
    if args.mode == "run":
        args.passes = [x for x in args.passes.split(",") if x]
        if set(args.passes) - set(PASSES) or not args.passes:
            p.error(f"--passes: expected some of {', '.join(PASSES)}, got {args.passes}")
    return args


def describe(ref: str, model: Path | None = None) -> dict[str, Any]:
    """The study's description (`Study.describe`) with the reference it was loaded by; with
    `model`, after loading the model from that file (its errors are the caller's to see)."""
    from profiler.collect.loading import load_study

    study = load_study(ref)
    if model is not None:
        study.load_model(model)
    return study.describe() | {"ref": ref}


def model_file(ref: str) -> Path:
    """The file of the study's default model (built first when the study builds it).

    Raises: UsageError when the study declares no model file."""
    from profiler.collect.loading import load_study
    from profiler.errors import UsageError

    study = load_study(ref)
    if study.model_file is None:
        raise UsageError(f"study {study.name} has no model file to export")
    return Path(study.model_file())


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Everything but writing the result: returns the result dict."""
    from profiler.collect import runtimes
    from profiler.collect.loading import load_study
    from profiler.collect.refcache import cached_reference

    emit("loading")
    study = load_study(args.study)
    spec = study.get(args.stage)
    result = _base_result(args, study, spec)
    runtime = runtimes.adapter(spec.runtime)
    stage = spec.build()
    why = runtime.missing() or runtimes.missing_needs(spec.needs) or _unavailable(stage)
    if why:
        return result | {"status": schema.SKIPPED, "reason": why}
    model = study.load_model(args.model)
    if study.layers is not None:
        result["layers"] = _layer_rows(study.layers(model))
    x = study.make_inputs(args.items, args.data)
    if "metrics" in args.passes and args.ncu_items and args.ncu_items < len(x):
        x = x[: args.ncu_items]
        result["notes"].append(f"metrics pass on the first {len(x)} of {args.items} items")
    emit("reference")
    ref_x = reference_input(stage, x)
    if ref_x is not x:
        result["notes"].append(
            "checked against the reference computed on the input as the stage's own input "
            "format holds it (reference_input)"
        )
    elif getattr(type(stage), "reference_input", None) not in (None, Stage.reference_input):
        result["notes"].append("the stage's own input format holds the input exactly")
    ref = cached_reference(study, model, ref_x, log=_log)
    checks = Checks(ref, study.compare_for(spec))
    batch = min(args.batch or len(x), len(x))
    result.update(items=len(x), batch=batch)
    emit("prepare")
    if hasattr(stage, "prepare"):
        stage.prepare(model, batch)
    try:
        host_x = stage.host_input(x) if hasattr(stage, "host_input") else x
        call = Call(stage, host_x, batch, f"{study.name}:{spec.key}", runtime)
        _passes(call, args, result, checks)
        checks.check_held()  # (each pass checks its own; nothing may stay unchecked)
        result["notes"] += checks.notes
    finally:
        if hasattr(stage, "release"):
            stage.release()
    status = schema.FAIL if checks.failures else schema.PASS
    return result | checks.summary() | {"status": status, "reason": checks.reason()}


def _layer_rows(table: Any) -> list[dict[str, Any]]:
    """The study's per-node facts (a DataFrame or records) as JSON-ready records."""
    import pandas as pd

    return list(json.loads(pd.DataFrame(table).to_json(orient="records")))


def reference_input(stage: Any, x: np.ndarray) -> np.ndarray:
    """What the stage's outputs are checked on (`Stage.reference_input`); `x` itself when the
    stage does not say or gives back an equal array."""
    hook = getattr(stage, "reference_input", None)
    if not callable(hook):
        return x
    ref_x = np.asarray(hook(x))
    if ref_x.shape != x.shape:
        from profiler.errors import UsageError

        raise UsageError(f"reference_input changed the input's shape {x.shape} to {ref_x.shape}")
    return x if np.array_equal(ref_x, x) else ref_x


def _unavailable(stage: Any) -> str | None:
    check = getattr(stage, "unavailable", None)
    return check() if callable(check) else None


def _log(line: str) -> None:
    """A line for the worker's log (stdout lines without the event prefix go there)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _passes(call: Call, args: argparse.Namespace, result: dict[str, Any], checks: Checks) -> None:
    if "timed" in args.passes:
        harness.warm_up(call, args.warmup, checks)
        result["timed_ns"] = harness.timed_calls(call, "timed", args.repeat, checks)
    if "profiled" in args.passes:
        info = harness.profiled_pass(
            call, args.tracer, args.profiled_repeats, args.warmup, args.out, checks
        )
        result["profiled_ns"] = info.pop("profiled_ns")
        result["trace"] = info
    if "metrics" in args.passes:
        harness.metrics_pass(call, checks)


def _base_result(args: argparse.Namespace, study: Any, spec: Any) -> dict[str, Any]:
    return {
        "format": RESULT_FORMAT,
        "study": study.name,
        "unit": study.unit,
        "stage": spec.key,
        "title": spec.title,
        "technique": spec.technique,
        "role": spec.role,
        "runtime": spec.runtime,
        "uses_gpu": spec.uses_gpu,
        "passes": list(args.passes),
        "items": args.items,
        "batch": args.batch or args.items,
        "warmup": args.warmup,
        "repeat": args.repeat,
        "profiled_repeats": args.profiled_repeats,
        "timed_ns": [],
        "profiled_ns": [],
        "notes": [],
        "pid": os.getpid(),
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as JSON at `path` atomically (see profiler.files)."""
    files.write_text(path, json.dumps(data, indent=1, default=_jsonable))


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mode in ("describe", "model-file"):
        from profiler.errors import ProfgenError

        try:
            if args.mode == "describe":
                emit("study", study=describe(args.study, args.model))
            else:
                emit("model_file", path=str(model_file(args.study)))
        except ProfgenError as exc:
            print(f"profgen: error: {exc}", file=sys.stderr)
            return exc.exit_code
        return 0
    if args.timeout > 0:  # a watchdog thread that needs no GIL: works even inside a hung C call
        faulthandler.dump_traceback_later(args.timeout, exit=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.result, run(args))
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())

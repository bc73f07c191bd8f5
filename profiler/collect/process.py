"""One child process of a stage (a worker, or a profiler wrapping one): start it in its own
process group, forward its progress events, enforce the time limit, and judge how it ended.

A stage's reason is one line: what happened and the last line its log explains it with (an
exception's own line, or the watchdog's); the whole output stays in the stage's worker.log.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler.collect.harness import EVENT_PREFIX
from profiler.collect.tools import describe_exit, kill_group, spawn

EventSink = Callable[[str], None]
_WATCHDOG = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!", re.MULTILINE)
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Failure)\b.*")
PIPE_GRACE_S = 2.0  # a leftover grandchild may hold the pipe open after the child exits


@dataclass
class ChildRun:
    """One finished child: `ok`, or `timeout`/`crash` with a one-line reason; its result."""

    state: str
    reason: str = ""
    result: dict[str, Any] | None = None
    returncode: int | None = None


def run_child(
    cmd: list[str],
    log: Path,
    result_path: Path,
    limit_s: float,
    stage_limit_s: float,
    emit: EventSink,
    prefix: str = "",
) -> ChildRun:
    """Run `cmd` to completion or to `limit_s`, its output appended to `log`, its events
    forwarded to `emit` (with `prefix`). Ctrl-C kills its process group and propagates."""
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
    proc = spawn(cmd, log, stdout_pipe=True)
    events: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_stdout, args=(proc, log, events), daemon=True)
    reader.start()
    try:
        timed_out = _pump(proc, events, time.monotonic() + limit_s, emit, prefix)
    except BaseException:  # KeyboardInterrupt included: never leave the stage running
        kill_group(proc)
        raise
    if timed_out:
        kill_group(proc)
    reader.join(timeout=10)
    kill_group(proc)  # leftovers of the group (a profiled child of nsys or ncu)
    return judge(proc.returncode, timed_out, stage_limit_s, log, result_path)


def _read_stdout(proc: subprocess.Popen, log: Path, events: queue.Queue[str | None]) -> None:
    with open(log, "a") as fh:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith(EVENT_PREFIX):
                try:
                    events.put(str(json.loads(line[len(EVENT_PREFIX) :]).get("event", "")))
                except (ValueError, AttributeError):
                    fh.write(line)
            else:
                fh.write(line)
                fh.flush()
    events.put(None)


def _pump(
    proc: subprocess.Popen,
    events: queue.Queue[str | None],
    deadline: float,
    emit: EventSink,
    prefix: str,
) -> bool:
    """Forward events until the child's output ends and it exits; True when `deadline` passed."""
    ended = False
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        if proc.poll() is not None:
            exited_at = exited_at or now
            if ended or now - exited_at > PIPE_GRACE_S:
                return False
        if now > deadline:
            return True
        try:
            event = events.get(timeout=0.1)
        except queue.Empty:
            continue
        if event is None:
            ended = True
        else:
            emit(prefix + event)


def judge(
    returncode: int | None, timed_out: bool, limit_s: float, log: Path, result_path: Path
) -> ChildRun:
    """How the child ended, from its exit status, the watchdog's mark and its result file."""
    text = _read(log)
    if timed_out or (returncode and _WATCHDOG.search(text)):
        reason = f"stopped after the time limit of {limit_s:g} s (its threads' stacks: {log.name})"
        return ChildRun("timeout", reason, None, returncode)
    result = _read_result(result_path)
    if returncode == 0 and result is not None:
        return ChildRun("ok", "", result, 0)
    why = last_error_line(text)
    reason = describe_exit(returncode) + (f": {why}" if why else f" (see {log.name})")
    return ChildRun("crash", reason, result, returncode)


def _read_result(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def last_error_line(text: str) -> str:
    """The last line of `text` that names an exception (a traceback's own line), else its last
    non-empty line that is not a command echo; '' when there is none."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("$ ")]
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line[:300]
    return lines[-1][:300] if lines else ""


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""

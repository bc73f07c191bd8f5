"""Running external programs: one `run_tool`, process-group kills, log tails and fix hints.

Every external command profgen runs (nsys, ncu, the worker) starts in its own process group, so
a timeout or Ctrl-C can kill it with everything it started (nsys and ncu start the profiled
program as a child).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from profiler.errors import ProfilerRunError, ToolNotFound

TAIL_LINES = 20
KILL_GRACE_S = 3.0

# (text found in a tool's output, what to tell the user)
_HINTS: tuple[tuple[str, str], ...] = (
    (
        "ERR_NVGPUCTRPERM",
        "this user may not read the GPU's performance counters: run as root, or load the driver "
        "with NVreg_RestrictProfilingToAdminUsers=0 (see https://developer.nvidia.com/ERR_NVGPUCTRPERM)",
    ),
    (
        "libdw.so.1",
        "nsys's report importer needs libdw.so.1: install libdw1 (apt-get install libdw1) or put "
        "a copy of it on LD_LIBRARY_PATH",
    ),
    (
        "Unable to retrieve the importer version",
        "nsys's report importer (QdstrmImporter) could not run, so only a .qdstrm was written; "
        "the usual cause is a missing libdw.so.1: install libdw1 (apt-get install libdw1) or put "
        "a copy of it on LD_LIBRARY_PATH (`profgen doctor` checks this)",
    ),
    (
        "LibraryNotLoaded",
        "ncu could not load its profiling library on this machine (seen in sandboxed kernels "
        "such as gVisor): hardware counters cannot be read here",
    ),
)


def describe_exit(returncode: int | None) -> str:
    """`exited with status 1` or `was killed by signal SIGSEGV`."""
    if returncode is None:
        return "did not finish"
    if returncode < 0:
        try:
            return f"was killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}" if returncode else "exited without writing its result"


def hint_for(text: str) -> str:
    """The fix for the first known problem whose message appears in `text`, or ''."""
    return next((hint for needle, hint in _HINTS if needle in text), "")


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines of a text file ('' when it does not exist)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", errors="replace").replace("\r", "\n")
    kept = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])


def kill_group(proc: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """Terminate `proc`'s whole process group: SIGTERM, then SIGKILL after `grace_s`."""
    if proc.poll() is not None:
        _kill_leftovers(proc.pid)
        return
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            _kill_leftovers(proc.pid)
            return
        except subprocess.TimeoutExpired:
            continue


def _kill_leftovers(pgid: int) -> None:
    """Kill processes the leader left behind in its group (e.g. a profiled child of nsys)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone: nothing left to stop


def spawn(
    cmd: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdout_pipe: bool = False,
) -> subprocess.Popen:
    """Start `cmd` in a new process group, its output appended to `log_path`.

    With `stdout_pipe`, stdout is a pipe (text lines) and stderr still goes to the log.

    Raises: ToolNotFound when the program does not exist.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            return subprocess.Popen(
                list(cmd),
                stdout=subprocess.PIPE if stdout_pipe else log,
                stderr=log if stdout_pipe else subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=stdout_pipe or None,
                errors="replace" if stdout_pipe else None,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise ToolNotFound(f"{cmd[0]}: cannot be run ({exc.strerror})") from exc


def run_tool(
    cmd: Sequence[str],
    log_path: Path,
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess:
    """Run an external tool to completion, its stdout and stderr going to `log_path`.

    Returns: the CompletedProcess (returncode 0; the output is in the log file).

    Raises:
        ToolNotFound: the program does not exist or cannot be executed.
        ProfilerRunError: it exited non-zero or ran past `timeout` seconds (it is then killed
            with its process group); carries the command, the exit code (None on timeout),
            the log's last lines and a hint when the failure is a known one.
    """
    with open(log_path, "ab") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
    proc = spawn(cmd, log_path, env=env, cwd=cwd)
    try:
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        text = tail(log_path)
        raise ProfilerRunError(cmd, None, text, hint=f"it ran longer than {timeout:g} s") from None
    except BaseException:  # KeyboardInterrupt included: never leave the tool running
        kill_group(proc)
        raise
    _kill_leftovers(proc.pid)
    if returncode != 0:
        text = tail(log_path)
        raise ProfilerRunError(cmd, returncode, text, hint=hint_for(_read(log_path)))
    return subprocess.CompletedProcess(list(cmd), returncode)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def output_of(cmd: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> str:
    """stdout and stderr of a short command (a version query, ldd), whatever its exit status.

    Raises: ToolNotFound when it cannot be run or does not answer within `timeout` seconds.
    """
    try:
        done = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env) if env is not None else None,
        )
    except (FileNotFoundError, PermissionError) as exc:
        raise ToolNotFound(f"{cmd[0]}: cannot be run ({exc.strerror})") from exc
    except subprocess.TimeoutExpired as exc:
        raise ToolNotFound(f"{' '.join(cmd)} did not answer within {timeout:g} s") from exc
    return done.stdout + done.stderr


def tool_candidates(
    exe: str, env_var: str, search: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """Where a tool is looked for, in order: $ENV_VAR, PATH, the glob patterns of `search`
    (newest version first), without repeats."""
    found: list[str] = []
    if env.get(env_var):
        found.append(env[env_var])
    on_path = shutil.which(exe, path=env.get("PATH", ""))
    if on_path:
        found.append(on_path)
    for pattern in search:
        found.extend(sorted(glob.glob(pattern), reverse=True))
    return list(dict.fromkeys(found))


def find_tool(
    exe: str, env_var: str, search: Sequence[str], product: str, env: Mapping[str, str]
) -> Path:
    """$ENV_VAR when it is set (the user chose that tool: another one found elsewhere is not
    used in its place), else the first executable among `tool_candidates(...)`.

    Raises: ToolNotFound when $ENV_VAR is set and is no executable file, or naming the places
        looked at and how to point profgen at the tool.
    """
    if env.get(env_var):
        chosen = env[env_var]
        if os.path.isfile(chosen) and os.access(chosen, os.X_OK):
            return Path(chosen)
        raise ToolNotFound(f"{exe}: ${env_var}={chosen} is not an executable file")
    for path in tool_candidates(exe, env_var, search, env):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return Path(path)
    raise ToolNotFound(
        f"{exe} ({product}) was not found on PATH nor in {', '.join(search)}: "
        f"install {product}, or set {env_var}=/path/to/{exe}"
    )

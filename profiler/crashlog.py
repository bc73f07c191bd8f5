"""Log files for what does not fit on one line: an unexpected exception's traceback, or the
output of a study that failed to load. The one-line message names the file."""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from profiler import __version__
from profiler.files import cache_dir


def write_log(kind: str, text: str) -> Path:
    """Write `text` to a new file `<cache>/logs/<kind>-<UTC time>-<pid>-<n>.log` (see
    `profiler.files.cache_dir`), or the same name in the temporary directory when the cache
    cannot be written. Returns: its path (os.devnull when nothing could be written)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for folder in (cache_dir() / "logs", Path(tempfile.gettempdir())):
        for n in range(100):
            path = folder / f"{kind}-{stamp}-{os.getpid()}-{n}.log"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with open(path, "x", encoding="utf-8") as fh:
                    fh.write(text)
                return path
            except FileExistsError:
                continue
            except OSError:
                break
    return Path(os.devnull)


def write_crash_log(exc: BaseException, argv: Sequence[str]) -> Path:
    """Write `exc`'s traceback, the command and profgen's version to a new log file."""
    text = (
        f"profgen {__version__}\ncommand: {' '.join(map(str, argv))}\n\n"
        + "".join(traceback.format_exception(exc))
    )
    return write_log("crash", text)

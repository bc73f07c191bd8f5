"""Where an unexpected exception's traceback goes: a log file the one-line message names."""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from profiler import __version__
from profiler.files import cache_dir


def write_crash_log(exc: BaseException, argv: Sequence[str]) -> Path:
    """Write `exc`'s traceback, the command and profgen's version to a new log file.

    The file is `<cache>/crashes/crash-<UTC time>-<pid>.log` (see `profiler.files.cache_dir`),
    or the same name in the temporary directory when the cache cannot be written.
    Returns: the log's path.
    """
    name = f"crash-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.log"
    text = (
        f"profgen {__version__}\ncommand: {' '.join(map(str, argv))}\n\n"
        + "".join(traceback.format_exception(exc))
    )
    for folder in (cache_dir() / "crashes", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            with open(path, "x", encoding="utf-8") as fh:
                fh.write(text)
            return path
        except OSError:
            continue
    return Path(os.devnull)

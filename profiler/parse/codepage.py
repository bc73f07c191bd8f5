"""A text file written in the Windows code page (cp1252), not UTF-8, read as UTF-8.

nsys on Windows writes its text in the ANSI code page: `nsys stats --format table` marks a cell
it cut with `…`, which cp1252 writes as the one byte 0x85, no UTF-8 byte sequence. Such a file
is read with each byte decoded as cp1252 (every line keeps its number).
"""

from __future__ import annotations

import numpy as np

from profiler.parse.pasted import Reshaped

WINDOWS = "its text in the Windows code page (cp1252), not UTF-8: read as cp1252"


def windows_text(data: bytes) -> Reshaped | None:
    """The text of `data` (a file's bytes) as UTF-8, when it is not UTF-8 but is cp1252 text
    (no NUL byte, no byte cp1252 leaves undefined); else None."""
    if b"\x00" in data:
        return None
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    return Reshaped(text.encode("utf-8"), np.arange(1, text.count("\n") + 2), WINDOWS)

"""An nvprof log's text: a `str`, or an ASCII file's bytes read as text (`AsciiText`), and a
pattern matched on either."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any


class AsciiText:
    """An ASCII file's text held as its bytes, `whole[start:end]` (a section of a capture is a
    range of the capture's bytes, not copied): what `nvprof_tables.tables` searches, each cut
    made a `str` only when taken (the whole text of a 200 MB file as a `str` costs 0.15 s).
    `data` is the text's bytes (a view of the range); `find` and `rfind` search the range as
    `bytes` methods search `data`."""

    def __init__(self, whole: bytes, start: int = 0, end: int | None = None) -> None:
        end = len(whole) if end is None else end
        self.whole, self.start, self.size = whole, start, end - start
        self.data: bytes | memoryview = (
            whole if (start, end) == (0, len(whole)) else memoryview(whole)[start:end]
        )

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, cut: slice) -> str:
        return str(self.data[cut], "ascii")

    def __str__(self) -> str:
        return str(self.data, "ascii")

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:
        return self._search(self.whole.find, sub, start, end)

    def rfind(self, sub: str, start: int = 0, end: int | None = None) -> int:
        return self._search(self.whole.rfind, sub, start, end)

    def count(self, sub: str, start: int, end: int, /) -> int:
        """`str.count` over `text[start:end]`, for positions in the text
        (`table_origin.LineCounter`)."""
        return self.whole.count(sub.encode("ascii"), self.start + start, self.start + end)

    def _search(
        self, method: Callable[[bytes, int, int | None], int], sub: str, start: int, end: int | None
    ) -> int:
        """`method` (`whole.find` or `whole.rfind`) over the text, `start` and `end` read as
        `bytes.find` reads them (from the end when negative, clipped to the text), the offset
        found made the text's."""
        if self.data is self.whole:
            return method(sub.encode("ascii"), start, end)
        n = self.size
        start = max(start + n, 0) if start < 0 else start
        end = n if end is None else max(end + n, 0) if end < 0 else min(end, n)
        if start > n:
            return -1
        found = method(sub.encode("ascii"), self.start + start, self.start + end)
        return found if found < 0 else found - self.start


Text = str | AsciiText


def match(pattern: re.Pattern[str], text: Text, pos: int) -> re.Match[Any] | None:
    """`pattern.match(text, pos)`; on an `AsciiText`, its twin for bytes on the bytes (the
    patterns hold ASCII only: the same matches)."""
    if isinstance(text, str):
        return pattern.match(text, pos)
    return _for_bytes(pattern).match(text.data, pos)


@functools.cache
def _for_bytes(pattern: re.Pattern[str]) -> re.Pattern[bytes]:
    return re.compile(pattern.pattern.encode("ascii"), pattern.flags & ~re.UNICODE)

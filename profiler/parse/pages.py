"""How the parsers' large arrays get their memory: NumPy's huge pages, and pandas' string storage.

NumPy advises the kernel to back every array of 4 MiB or more with transparent huge pages
(madvise MADV_HUGEPAGE). Where the kernel's THP defrag setting is `madvise` (a common default),
a page fault in such an array may first compact memory: on a 2-core VM, parsing the same
1,000,000-row table spent 0.3 s in the kernel on one run and 0.85 s on the next. The parsers
make and drop many such arrays, each used once, where huge pages save little, so `profgen
import` turns the advice off for its own process (`set_huge_pages(False)`).

pandas 3 keeps a `string` column's cells in pyarrow's storage where pyarrow is installed, and in
Python objects where it is not. The parsers make their string columns by taking a few names by
code, or from Python strings they already hold: pyarrow's storage copies every row's bytes, and
makes new objects each time a column is read out, where Python's refers to the strings it has.
On the H100 host (pyarrow installed) a 1,000,000-row ncu `--csv` details page read in 1.51 s with
Python's storage against 1.70 s with pyarrow's (1.83 against 2.19 on a slower machine), and the
other million-row pages read within the machines' noise either way. `profgen import` keeps
its columns in Python's storage (`set_string_storage("python")`), the storage the tests run in on
a machine without pyarrow.
"""

from __future__ import annotations

import pandas as pd


def set_huge_pages(enabled: bool) -> bool | None:
    """Whether NumPy advises huge pages for the arrays it allocates from now on in this process;
    returns the previous setting, or None when this NumPy cannot change it."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]
    except ImportError:  # NumPy 1.x
        try:
            from numpy.core.multiarray import _set_madvise_hugepage  # type: ignore[no-redef]
        except ImportError:
            return None
    return bool(_set_madvise_hugepage(enabled))


def set_string_storage(storage: str) -> str:
    """Where pandas keeps the cells of the `string` columns made from now on in this process
    (`"python"` or `"pyarrow"`); returns the previous setting (pandas 3's default: `"auto"`)."""
    before = str(pd.get_option("mode.string_storage"))
    pd.set_option("mode.string_storage", storage)
    return before

"""How the parsers' large temporary arrays get their memory.

NumPy advises the kernel to back every array of 4 MiB or more with transparent huge pages
(madvise MADV_HUGEPAGE). Where the kernel's THP defrag setting is `madvise` (a common default),
a page fault in such an array may first compact memory: on a 2-core VM, parsing the same
1,000,000-row table spent 0.3 s in the kernel on one run and 0.85 s on the next. The parsers
make and drop many such arrays, each used once, where huge pages save little, so `profgen
import` turns the advice off for its own process (`set_huge_pages(False)`).
"""

from __future__ import annotations


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

"""Which report a block of an `nsys stats` capture holds: its marker's or its header's, where
they contradict (`report_of`); the table under the lines of a command or caption typed above it
(`past_caption`); and a table of OS calls under a CUDA API summary's header (`os_calls`)."""

from __future__ import annotations

import warnings

import pandas as pd

from profiler.parse import nsys_fields, nsys_rule, reader_notes
from profiler.parse.nsys_stdout import Block


def os_calls(frame: pd.DataFrame | None) -> bool:
    """Whether a table read as a CUDA API summary under no marker is one of OS runtime calls
    (`osrt_sum`, whose header is the same): rows, and no name of a CUDA runtime or driver API
    function (`cudaMalloc`, `cuLaunchKernel`: every name in `cuda_api_sum` starts `cu`)."""
    if frame is None or not len(frame):
        return False
    return not frame["name"].astype("string").str.startswith("cu").fillna(False).any()


# The GPU summaries whose headers tell them apart: a kernel summary's `Instances` and `Name`, a
# memory summary's `Operation` with its time (or its sizes). No CUDA API summary has either.
_GPU_SUMS = frozenset(
    {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_gpu_sum"}
)
_CALLS = frozenset({"calls", "numcalls"})  # a CUDA API (or OS runtime) summary's count of calls


_CAPTION_LINES = 3  # the lines of a command or caption typed right above a table


def report_of(block: Block, cells: list[str]) -> str | None:
    """The report of a block's table (header `cells`): its marker's, or its header's when it has
    no marker. The processes of one job (MPI ranks) that print into one stream interleave one's
    banners with another's tables, so where the header contradicts the marker it wins, with a
    warning: a GPU summary's header under the banner of another report profgen reads is read as
    its header says, and a table of calls (`Num Calls`: CUDA API or OS runtime calls) under a
    GPU summary's banner is left out. Reading kernels as memory copies, or calls as kernels,
    would be a silent misread."""
    found, marked = nsys_fields.identify_cells(cells), block.report
    if marked in _GPU_SUMS and _CALLS & {nsys_fields.key(cell)[0] for cell in cells}:
        _contradicted(block, "a table of calls (CUDA API or OS runtime) under", "left out")
        return None
    if marked not in {*_GPU_SUMS, "cuda_api_sum"} or found not in _GPU_SUMS or found == marked:
        return marked or found
    _contradicted(block, f"a {found} table under", "read as its header says")
    return found


def _contradicted(block: Block, what: str, done: str) -> None:
    """Warn (`reader_notes.ReadNote`) that the table of `block` is not what its marker names."""
    said = (
        f"line {block.first_line}: {what} the banner of {block.report} (the output of several "
        f"processes interleaved?): {done}"
    )
    warnings.warn(reader_notes.ReadNote(said, block.first_line), stacklevel=4)


def past_caption(block: Block) -> Block:
    """A block under no marker whose first lines (up to `_CAPTION_LINES`) are no table but
    whose next two are a report's column-text header and rule (`sudo nsys nvprof bin/x` typed
    right above its table; a README's heading and caption, `### CUDA` then `#### Table 1:
    cuda_api_sum`): the table below those lines. Any other block as it is."""
    if block.report is not None or nsys_rule.is_rule(block.header_rule()[1]):
        return block
    rest = block
    for _ in range(_CAPTION_LINES):
        below = rest.less_first_line()
        if below is None:
            return block
        rest = below
        header, rule = rest.header_rule()
        if nsys_rule.is_rule(rule):
            cells = nsys_rule.header_cells(header, nsys_rule.columns_under(header, rule))
            return rest if cells is not None and nsys_fields.identify_cells(cells) else block
    return block

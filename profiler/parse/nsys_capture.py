"""One capture of `nsys stats` output (stdout in CSV with every report concatenated, or the
default column text) -> profgen's tables (`nsys_csv` lists the layouts and reports).

`nsys_stdout` finds the reports in a capture, `nsys_block_report` which report each block
holds, `nsys_no_table` why a capture holds none profgen reads. When a capture holds a report
twice (two runs), `read_stats_runs` reads each run the file tells apart (`nsys_runs`), and
`read_stats_stdout` the first table of each report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePath

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import (
    csvtext,
    nsys_block_report,
    nsys_csv,
    nsys_fields,
    nsys_gaps,
    nsys_no_table,
    nsys_notes,
    nsys_rule,
    nsys_runs,
    nsys_stdout,
    nsys_tables,
    nsys_text,
    nsys_wrapped,
)
from profiler.parse.nsys_csv import EXPECTED
from profiler.parse.nsys_stdout import Block, split_stdout
from profiler.parse.table_origin import Origin


def read_stats_stdout(path: str | Path | csvtext.Held, stage: str) -> dict[str, pd.DataFrame]:
    """Read one capture of `nsys stats` output (CSV or column text) with several reports in it
    (a file, or its bytes held).

    Returns: tables by name, as `read_stats_dir`.

    Raises: ParseError when its first 64 KiB hold no nsys line, no report can be found in the
        text, or a report is corrupt.
    """
    return nsys_tables.build(read_stdout_reports(path), stage)


def read_stats_runs(
    path: str | Path | csvtext.Held, stage: str
) -> list[tuple[nsys_runs.Run, dict[str, pd.DataFrame]]]:
    """Read one capture of `nsys stats` output as `read_stats_stdout`, as one run per run it
    tells apart when it prints a report again (`nsys_runs`): each run and its tables.

    Raises: ParseError as `read_stats_stdout`, and when it prints a report again, does not
        tell the runs apart, and reading the first table of each report would mix them.
    """
    tables, file = _stdout_tables(path)
    found = nsys_runs.runs(tables)
    if found is None:
        why = nsys_runs.mixed(tables)
        if why is not None:
            raise ParseError(file, EXPECTED, why)
        first = nsys_runs.first_of_each(tables, file)
        return [(nsys_runs.Run(tables), nsys_tables.build(first, stage))]
    return [(run, nsys_tables.build(run.reports(file), stage)) for run in found]


def read_stdout_reports(path: str | Path | csvtext.Held) -> dict[str, tuple[pd.DataFrame, Path]]:
    """The reports of one capture, by canonical name: their `nsys_fields` frames (units
    applied) and the file (what `read_stats_stdout` builds its tables from); of a report
    printed again, the first table (`nsys_runs.first_of_each`, with a warning).

    Raises: ParseError as `read_stats_stdout`.
    """
    tables, file = _stdout_tables(path)
    return nsys_runs.first_of_each(tables, file)


@nsys_notes.said_once()  # (notes cut off the names of several tables: one warning)
def _stdout_tables(path: str | Path | csvtext.Held) -> tuple[list[nsys_runs.Table], Path]:
    """Every table with rows of a report profgen reads in one capture, in file order, and the
    file.

    Raises: ParseError as `read_stats_stdout`.
    """
    source, path = path, csvtext.source_path(path)
    head = csvtext.read_head(source, EXPECTED)
    if not nsys_stdout.recognise(head):
        raise ParseError(path, EXPECTED, "its start has no nsys report header or nsys line")
    data, ascii = csvtext.read_utf8_ascii(source, EXPECTED)  # (ASCII: a character is a byte)
    blocks = nsys_stdout.split_ascii(data) if ascii else split_stdout(data.decode("utf-8"))
    blocks = nsys_gaps.rejoined(blocks)  # a header or rows a paste set apart by a blank line
    tables: list[nsys_runs.Table] = []
    found, since = False, 0
    # A table under no report's name (its `[4/8] Executing 'osrt_sum'` line cut by the paste)
    # is known by its header only, which some reports share (osrt_sum's is cuda_api_sum's): a
    # report that the capture names elsewhere is that table's, not this one.
    named = [b.report for b in blocks if b.report not in (None, nsys_stdout.SKIP)]
    os_runtime: list[int] = []  # lines of tables of OS calls under no marker
    wrapped: list[ParseError] = []  # why each table a terminal wrapped was left out
    for block in blocks:
        if block.report == nsys_stdout.SKIP:
            continue
        block = nsys_block_report.past_caption(block)
        span = block.span if ascii else None
        raw = None if span is None else (data, *span)
        read = {t.report for t in tables}
        done = [] if block.report is not None else [r for r in named if r not in read]
        try:
            report, frame = _read_block(block, path, done, raw)
        except ParseError as exc:
            if not nsys_wrapped.left_out(block, exc):
                raise
            wrapped.append(exc)
            continue
        if block.report is None and report == "cuda_api_sum" and nsys_block_report.os_calls(frame):
            os_runtime.append(block.first_line)  # osrt_sum's header is cuda_api_sum's
            continue
        found = found or report is not None
        if report is not None and frame is not None and len(frame):
            start, end = block.pieces[0][0], block.pieces[-1][1]
            gap = _decoded(block.source, since, start)
            label, parted = nsys_runs.placed(gap)
            sure = block.report is not None or report not in named
            line = block.first_line
            printed = _printed(gap) if block.report == "nvtx_sum" else None
            tables.append(nsys_runs.Table(report, frame, line, label, parted, sure, printed))
            since = end
    if not tables and wrapped:
        raise wrapped[0]
    if not found:
        reason = (
            nsys_no_table.written_elsewhere(head)
            or nsys_no_table.all_skipped(head)
            or nsys_no_table.all_empty(head)
            or nsys_no_table.only_unused(head, blocks)
            or nsys_no_table.os_runtime_only(os_runtime)
            or nsys_no_table.header_alone(blocks)
            or nsys_no_table.not_nsys_layout(blocks)
            or nsys_no_table.banners_alone(head)
            or nsys_no_table.csv_in_text(head)
            or "no nsys report header found"
        )
        raise ParseError(path, EXPECTED, reason)
    if not tables:
        raise ParseError(path, EXPECTED, "its reports have a header but no rows")
    return tables, path


_MARKER_REACH = 3  # the lines above a table (not blank) its marker is among


def _printed(gap: str) -> str | None:
    """The report of NVTX ranges of one kind (`nvtx_pushpop_sum`, `nvtx_startend_sum`: read as
    nvtx_sum) that the marker right above a table names, from the text above it (`gap`); None
    when it names another."""
    lines = [line for line in gap.split("\n") if line.strip()][-_MARKER_REACH:]
    names = [nsys_stdout.named(line) for line in reversed(lines)]
    name = next((PurePath(n).name.removesuffix(".py") for n in names if n), None)
    return name if name in nsys_fields.RANGES_OF_ONE_KIND else None


def _decoded(source: str | bytes, start: int, end: int) -> str:
    """`source[start:end]` as text (a capture's bytes are ASCII)."""
    cut = source[start:end]
    return cut.decode("ascii", "replace") if isinstance(cut, bytes) else cut


def _read_block(
    block: Block, path: Path, done: list[str], raw: tuple[bytes, int, int] | None = None
) -> tuple[str | None, pd.DataFrame | None]:
    """The report a block holds (None when it is no report) and its fields (None when that
    report is in `done`: one the capture names elsewhere, not this unnamed table); `raw`: the
    file's bytes and where the block starts and ends in them, when they are its characters one
    for one."""
    header, rule = block.header_rule()
    text = nsys_rule.is_rule(rule)
    cells = nsys_rule.header_cells(header, nsys_rule.columns_under(header, rule)) if text else None
    cells = cells if cells is not None else csvtext.header_cells(header)
    report = nsys_block_report.report_of(block, cells)
    if report is not None and not nsys_fields.has_fields(cells, report):
        nsys_wrapped.joined(block, header)  # (a table run together, said: left out as well)
        return None, None  # under a marker, but no table of it (the report was empty)
    if report is None or report in done:
        return report, None
    expected = f"nsys {report} report"
    if text:
        origin = Origin(path, expected, "", block.first_line, 1, block.dropped, cut=_text(block))
        return report, nsys_text.read_table(_text(block), report, origin, block.units, raw)
    source = block.text if raw is None else raw[0][raw[1] : raw[2]]  # (bytes: not decoded)
    origin = Origin(path, expected, source, block.first_line, dropped=block.dropped)
    if block.report is None:
        nsys_csv.check_header(header, report, path)
    return report, nsys_fields.parse(source, header, report, origin)


def _text(block: Block) -> Callable[[], str]:
    """What gives a block's text, made only when called."""
    return lambda: block.text

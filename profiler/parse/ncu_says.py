"""What ncu itself says in its output when it holds no results: its `==ERROR==` lines
(`ncu_error`), `==WARNING== No kernels were profiled.`, or the report it wrote instead
(`==PROF== Report: x.ncu-rep`), quoted by `nothing_profiled` for the CSV and text readers."""

from __future__ import annotations

from profiler.parse import cell_quotes


def nothing_profiled(text: str, otherwise: str) -> str:
    """Why ncu's output holds no results, in ncu's own words (its first `==ERROR==` line, or
    `==WARNING== No kernels were profiled.`) when it wrote any; else where ncu wrote them
    instead (`==PROF== Report: x.ncu-rep`, a run with `-o`) when it says; else `otherwise`."""
    said = ncu_error(text)
    if said is None:
        said = next(
            (
                line.strip()
                for line in text.split("\n")
                if line.lstrip(" \t").startswith("==WARNING==")
                and "No kernels were profiled" in line
            ),
            None,
        )
    if said is not None:
        return f"ncu profiled no kernel; it said {cell_quotes.shown_cell(said, 300)}"
    report = _report_file(text)
    if report is not None:
        return (
            f"ncu wrote its results only to the report {cell_quotes.shown_cell(report, 300)} "
            "(`==PROF== Report:`), not here: import that .ncu-rep instead"
        )
    return otherwise


def _report_file(text: str) -> str | None:
    """The file of ncu's last `==PROF== Report: FILE` line (a line that starts with it)."""
    mark = "==PROF== Report: "
    line = _line_led_by(text, mark, last=True)
    return None if line is None else line[len(mark) :].strip() or None


def ncu_error(text: str) -> str | None:
    """ncu's first `==ERROR==` line (one that starts with it), stripped; None without one.

    When that line is only ncu's lead-in (`An error was reported by the driver`, `... by the
    counter measurement library:`), the error itself is on the next line that is not blank,
    a `==ERROR==` line of its own: the two are given as one, `LEAD: DETAIL`."""
    first = _line_led_by(text, _ERROR)
    if first is None or not first.startswith(_ERROR_LEAD):
        return first
    detail = _next_line(text, text.find(first) + len(first))
    if detail is None or not detail.startswith(_ERROR):
        return first
    return f"{first.rstrip(':')}: {detail[len(_ERROR) :].strip()}"


_ERROR = "==ERROR=="
_ERROR_LEAD = "==ERROR== An error was reported by"


def _next_line(text: str, at: int) -> str | None:
    """The first line of `text` after the line that holds position `at` that is not blank,
    stripped; None when there is none."""
    end = text.find("\n", at)
    while end >= 0:
        start, end = end + 1, text.find("\n", end + 1)
        line = text[start : len(text) if end < 0 else end].strip()
        if line:
            return line
    return None


def _line_led_by(text: str, mark: str, last: bool = False) -> str | None:
    """The first (`last`: the last) line of `text` that starts with `mark`, after blanks (a line
    of a block that RST or Markdown indents), stripped; None when no line does."""
    at = text.rfind(mark) if last else text.find(mark)
    while at > 0 and not _after_blanks(text, at):
        at = text.rfind(mark, 0, at) if last else text.find(mark, at + 1)
    if at < 0:
        return None
    end = text.find("\n", at)
    return text[at : end if end >= 0 else len(text)].strip()


def _after_blanks(text: str, at: int) -> bool:
    """Whether only blanks stand before `at` on its line (looked at back to the first other
    character: each blank once for the mark after it)."""
    start = at
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return start == 0 or text[start - 1] == "\n"

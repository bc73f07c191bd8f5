"""Profiler output published inside a web page or a Jupyter notebook, read as the terminal
printed it: the text of an HTML page's `<pre>` blocks (a tutorial, a codelab, slides exported
from a notebook), with their tags taken off and their entities decoded; and the text a
notebook's cells printed (their outputs' JSON strings, decoded), without the cells' code and
prose. Whatever else the file holds is skipped: a blank line stands for each of its lines, so a
table printed in one block ends where the block does.

A notebook whose cells printed no profiler output (a course's notebook, its outputs cleared) may
show one in its prose instead, as the output a run gives: `notebook_blocks` gives the fenced
blocks of its Markdown cells, which `profiler.import_paste` reads only then.

`html_text`, `notebook_text` and `notebook_blocks` give a `pasted.Reshaped` (each line located
at its file line); `profiler.import_paste` reads a page or a notebook through them. Each is
linear in the file: one pass over its lines, each line searched with `str.find` and patterns
that never go back.
"""

from __future__ import annotations

import html
import json
import re

import numpy as np

from profiler.parse import cell_quotes
from profiler.parse.pasted import Reshaped

HTML = "HTML markup: read from its <pre> blocks (tags taken off, entities decoded), the rest "
HTML += "of the page skipped"
NOTEBOOK = "a Jupyter notebook's JSON: read from what its cells printed (each JSON string "
NOTEBOOK += "decoded), their code and prose skipped"
NOTEBOOK_BLOCKS = "a Jupyter notebook's JSON whose cells printed no profiler output: read from "
NOTEBOOK_BLOCKS += "the fenced blocks of its Markdown cells (the output its prose shows), the rest "
NOTEBOOK_BLOCKS += "skipped"

_NOTHING = {  # worded as `unusable.document` words a page in which detection found no table
    HTML: "it is an HTML page in which no profiler table was found (it has no <pre> block, "
    "where a page shows what a program printed)",
    NOTEBOOK: "it is a Jupyter notebook in which no profiler table was found (none of its cells "
    "printed anything)",
}

BLOCK = "```"  # above each <pre> block's text: a Markdown fence, which starts a capture's section
_HTML_START = re.compile(r"\A\s*+(?:<!--[^\n]{0,200}-->\s*+)?<(?:!doctype html|html)[\s>]", re.I)
_NOTEBOOK_KEYS = ('"cells"', '"cell_type"')
_TAG = re.compile(r"<[^<>\n]*+>")
_ANSI = re.compile(r"\x1b\[[0-9;]*+[A-Za-z]")
# nbformat writes an output's text as an array of JSON strings, one line each (`"text": [`),
# or, in some writers, as one string (`"text": "..."`); `text/plain` holds a result's text.
_JSON_STRING = r'"(?:[^"\\\n]|\\.)*+"'
_TEXT_KEY = r'[ \t]*+"(?:text|text/plain)":[ \t]*+'
_TEXT_ARRAY = re.compile(rf"{_TEXT_KEY}\[[ \t\r]*+")
_TEXT_ONE = re.compile(rf"{_TEXT_KEY}(?P<s>{_JSON_STRING})[ \t]*+,?[ \t\r]*+")
_ELEMENT = re.compile(rf"[ \t]*+(?P<s>{_JSON_STRING})[ \t]*+,?[ \t\r]*+")
_CELL_TYPE = re.compile(r'[ \t]*+"cell_type":[ \t]*+"(?P<t>\w++)"[ \t]*+,?[ \t\r]*+')
_SOURCE_KEY = r'[ \t]*+"source":[ \t]*+'
_SOURCE_ARRAY = re.compile(rf"{_SOURCE_KEY}\[[ \t\r]*+")
_SOURCE_ONE = re.compile(rf"{_SOURCE_KEY}(?P<s>{_JSON_STRING})[ \t]*+,?[ \t\r]*+")
_FENCE = re.compile(r"[ \t]{0,3}(?:```|~~~)")  # as `parse.capture` cuts a section at one
# a rich output's `text/plain` (`<IPython.core.display.HTML object>`, `<Figure size 640x480
# with 1 Axes>`): its name in angle brackets
_DISPLAY = re.compile(r"[ \t]*+<[^<>\n]{1,200}+>[ \t\r]*+")


def is_html(head: str) -> bool:
    """Whether a file's first bytes (`head`) open an HTML page."""
    return _HTML_START.match(head) is not None


def is_notebook(head: str) -> bool:
    """Whether a file's first bytes (`head`) open a Jupyter notebook (a JSON object of cells)."""
    return head.lstrip().startswith("{") and all(key in head for key in _NOTEBOOK_KEYS)


def nothing_shown(shape: Reshaped) -> str | None:
    """Why a page or a notebook read through `html_text` or `notebook_text` (`shape`) is
    refused when it shows no text at all (a page's `BLOCK` lines are no text), or a notebook
    whose cells showed only rich outputs (`_DISPLAY`: a course notebook whose widgets and
    pictures are all it kept); None when it shows some (or is neither)."""
    shown = [s for s in shape.data.decode().split("\n") if s.strip() and s != BLOCK]
    if not shown:
        return _NOTHING.get(shape.note)
    if shape.note != NOTEBOOK or not all(_DISPLAY.fullmatch(s) for s in shown):
        return None
    return (
        "it is a Jupyter notebook in which no profiler table was found (its cells printed no "
        "text, only rich outputs (pictures, widgets, pages) shown by name, such as "
        f"{cell_quotes.shown_cell(shown[0], 80)})"
    )


def html_text(data: bytes) -> Reshaped:
    """The text of the `<pre>` blocks of an HTML page (`data`, its UTF-8 bytes), each line at
    its file line, the page's other lines blank (all of them when it has no such block). A
    fence line (`BLOCK`, at the line of the `<pre>` tag) goes above each block, as Markdown
    writes the block a page renders it from: each block is a section of its own, so an
    elision mark in one (a code listing's `...`) says nothing of another's tables."""
    out: list[str] = []
    at: list[int] = []
    inside = False
    for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        kept, inside, opened = _pre_text(line, inside)
        if opened:
            out.append(BLOCK)
            at.append(number)
        out.append(html.unescape(_TAG.sub("", kept)).replace("\xa0", " ") if kept else "")
        at.append(number)
    return Reshaped("\n".join(out).encode(), np.asarray(at, dtype=np.int64), HTML)


def _pre_text(line: str, inside: bool) -> tuple[str, bool, bool]:
    """What of `line` lies inside `<pre>` blocks (`inside`: whether the line starts inside
    one), whether the line ends inside one, and whether a block opens on it."""
    low, at, kept, opened = line.lower(), 0, [], False
    while at < len(line):
        if inside:
            close = low.find("</pre", at)
            kept.append(line[at : len(line) if close < 0 else close])
            if close < 0:
                break
            inside, at = False, _tag_end(low, close)
        else:
            start = _pre_open(low, at)
            if start < 0:
                break
            inside, at, opened = True, _tag_end(low, start), True
    return "".join(kept), inside, opened


def _pre_open(low: str, at: int) -> int:
    """Where the next `<pre>` (or `<pre ...>`) tag of the lower-cased line `low` starts, from
    `at`; -1 when none does."""
    start = low.find("<pre", at)
    while start >= 0 and low[start + 4 : start + 5] not in (">", " ", "\t", ""):
        start = low.find("<pre", start + 4)
    return start


def _tag_end(low: str, start: int) -> int:
    """Just past the `>` that closes the tag at `start` (the line's end when none does)."""
    end = low.find(">", start)
    return len(low) if end < 0 else end + 1


def notebook_text(data: bytes) -> Reshaped:
    """What a Jupyter notebook's cells printed (`data`, the notebook's UTF-8 bytes): the strings
    of its outputs' `text` (and `text/plain`) decoded and run together as the terminal showed
    them, each line located at the file line its first string is on, terminal colour codes
    and NUL characters taken off (a program's stray `\0`: a terminal shows nothing for it); a
    blank line for each other line of the file (all of them when no cell printed
    anything)."""
    out: list[str] = []
    at: list[int] = []
    pending: list[str] = []
    pending_line = 0
    in_array = False
    for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        piece, in_array = _json_string(line, in_array, _TEXT_ARRAY, _TEXT_ONE)
        if piece is None:
            _flush(out, at, pending, pending_line)
            pending = []
            out.append("")
            at.append(number)
            continue
        if not pending:
            pending_line = number
        pending.append(_ANSI.sub("", piece).replace("\x00", ""))
        if piece.endswith("\n"):
            _flush(out, at, pending, pending_line)
            pending = []
    _flush(out, at, pending, pending_line)
    return Reshaped("\n".join(out).encode(), np.asarray(at, dtype=np.int64), NOTEBOOK)


def notebook_blocks(data: bytes) -> Reshaped:
    """The fenced blocks (```` ``` ```` or `~~~`) of a Jupyter notebook's Markdown cells (`data`,
    the notebook's UTF-8 bytes), each line at the file line of its source string; a blank line
    for each other line of the sources and of the file. Blocks with nothing between them but
    cell boundaries are read as one (a run's reports, a block each: nsys's `[6/8]` after its
    `[5/8]`); prose or a code cell between two starts a capture's section (a fence, `BLOCK`).
    A block left open ends with its cell."""
    out: list[str] = []
    at: list[int] = []
    markdown = in_source = fenced = False
    apart = True  # whether prose or code came since the last block
    for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        kind = _CELL_TYPE.fullmatch(line)
        if kind is not None:
            markdown, fenced = kind["t"] == "markdown", False
            apart = apart or not markdown
        text = None
        if markdown:
            text, in_source = _json_string(line, in_source, _SOURCE_ARRAY, _SOURCE_ONE)
        for piece in [""] if text is None else text.removesuffix("\n").split("\n"):
            fence = _FENCE.match(piece) is not None
            opens = fence and not fenced
            out.append(BLOCK if opens and apart else piece if fenced and not fence else "")
            at.append(number)
            apart = (apart or (not fenced and bool(piece.strip()))) and not opens
            fenced ^= fence
    return Reshaped("\n".join(out).encode(), np.asarray(at, dtype=np.int64), NOTEBOOK_BLOCKS)


def _json_string(
    line: str, in_array: bool, array: re.Pattern[str], one: re.Pattern[str]
) -> tuple[str | None, bool]:
    """The decoded string a key's value has on `line` (None when none), and whether the next
    line is still in the key's array of strings (`in_array`: whether this one is). The key is
    an output's `text` (`array` and `one`: `_TEXT_ARRAY`, `_TEXT_ONE`) or a cell's `source`
    (`_SOURCE_ARRAY`, `_SOURCE_ONE`): `array` opens its array of strings, `one` is the key with
    a single string. An element that is no valid JSON string gives None and the array goes on;
    a line that is no element ends the array, and may open the next."""
    element = _ELEMENT.fullmatch(line) if in_array else None
    if element is not None:
        return _decoded(element["s"]), True
    if array.fullmatch(line) is not None:
        return None, True
    whole = one.fullmatch(line)
    return (None if whole is None else _decoded(whole["s"])), False


def _decoded(token: str) -> str | None:
    """The JSON string `token` decoded (None when it is no valid JSON string)."""
    try:
        text = json.loads(token)
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def _flush(out: list[str], at: list[int], pending: list[str], line: int) -> None:
    """The strings `pending` (run together: a string without its newline continues the line)
    appended to `out` as lines, each located at file line `line`."""
    if not pending:
        return
    lines = "".join(pending).removesuffix("\n").split("\n")
    out.extend(lines)
    at.extend([line] * len(lines))

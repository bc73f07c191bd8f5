"""Text that came from a run (stage titles and keys, kernel and range names, reasons, run.json
fields) made safe and bounded for each place it is shown.

Everything in a run can be hostile or huge: an imported CSV may name a kernel with escape codes,
Markdown, HTML or a megabyte of text. Each target has its own rule:

- everywhere: a name costs at most `NAME_LIMIT` characters and prose `TEXT_LIMIT` (`clip`
  keeps the head and the tail, where C++ names differ, around an ellipsis);
- a terminal: control characters (escape codes, carriage returns, bidirectional overrides) are
  shown as `\\x1b`-style escapes, never sent (`terminal`); rich never parses run text as markup
  (the renderers hand it `rich.text.Text`, not strings);
- Markdown: `markdown_text` for prose (HTML and Markdown syntax shown literally) and
  `markdown_code` for a code span that no backtick can close;
- XML 1.0: characters it forbids become visible escapes (`xml_text`);
- plotly: its text is a subset of HTML (`<a href>`, `<b>`, `<br>`), so run text is
  HTML-escaped before it reaches a figure (`plotly_text`);
- the HTML templates autoescape everything they are given.
"""

from __future__ import annotations

import html
import re
from typing import Any

from profiler.render.units import is_missing

NAME_LIMIT = 400  # characters of a name (kernel, range, stage title or key); real ones reach 356
TEXT_LIMIT = 1000  # characters of prose (a technique, a reason, a finding)
ELLIPSIS = "…"

# C0 and C1 controls but tab and newline (handled by `one_line`), DEL, the bidirectional
# overrides and isolates that reorder what a terminal shows, and lone surrogates
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
# what XML 1.0 forbids (its Char production), plus the bidirectional controls
_NOT_XML = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u200d\u2010-\u2029\u202f-\u2065\u206a-\ud7ff\ue000-\ufffd"
    "\U00010000-\U0010ffff]"
)
_SPACES = re.compile(r"[\s\x85\u2028\u2029]+")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]()|~$])")


def text(value: Any) -> str:
    """A cell's value as a string; missing values (None, NA, NaN) as the empty string."""
    return "" if is_missing(value) else str(value)


def clip(value: Any, limit: int = NAME_LIMIT, tail: bool = True) -> str:
    """`value` as text of at most `limit` characters: its head and tail around `…` (C++ names
    differ in their template arguments), or only its head and `…` when not `tail` (titles)."""
    s = text(value)
    if len(s) <= limit:
        return s
    if not tail:
        return s[: max(limit - 1, 0)] + ELLIPSIS
    head = (limit - 1) * 2 // 3
    rest = limit - 1 - head
    return s[:head] + ELLIPSIS + (s[-rest:] if rest else "")


def one_line(value: Any) -> str:
    """Every run of whitespace (newlines, tabs, Unicode line separators) as one space."""
    return _SPACES.sub(" ", text(value)).strip()


def visible_controls(value: Any) -> str:
    """Control characters written out as escapes (`\\x1b`, `\\u202e`), never sent."""
    return _CONTROLS.sub(_escape_char, text(value))


def terminal(value: Any, limit: int = NAME_LIMIT) -> str:
    """Run text for a terminal line: one line, controls escaped, at most `limit` characters.

    Every other target starts from this text, then escapes its own syntax (which may lengthen
    it by a bounded factor: `<` is `&lt;` in HTML)."""
    return clip(visible_controls(one_line(clip(value, 4 * limit))), limit)


def xml_text(value: Any, limit: int = NAME_LIMIT) -> str:
    """Run text for an XML 1.0 attribute or element: forbidden characters escaped, clipped.

    ElementTree escapes `<`, `&` and quotes; what it cannot write is a character XML forbids.
    """
    return clip(_NOT_XML.sub(_escape_char, clip(value, 4 * limit)), limit)


def markdown_text(value: Any, limit: int = NAME_LIMIT) -> str:
    """Run text for Markdown prose or a table cell: one line, HTML and Markdown syntax shown
    literally (no link, image, emphasis or raw HTML can form; `|` cannot split a cell)."""
    s = html.escape(terminal(value, limit), quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", s)


def markdown_code(value: Any, limit: int = NAME_LIMIT, in_table: bool = True) -> str:
    """Run text as a Markdown code span that shows it verbatim: the fence is one backtick longer
    than any run of backticks inside, and (in a table) `|` is escaped as GFM requires."""
    s = terminal(value, limit)
    if in_table:
        s = s.replace("|", "\\|")
    if not s:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", s)), default=0) + 1)
    pad = " " if s.startswith(("`", " ")) or s.endswith(("`", " ")) else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def plotly_text(value: Any, limit: int = NAME_LIMIT) -> str:
    """Run text for a plotly figure (trace name, tick label, hover text, bar text, title):
    HTML-escaped (plotly draws `<a href>` and friends), one line, at most `limit` characters."""
    return html.escape(terminal(value, limit), quote=False)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

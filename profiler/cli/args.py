"""Argument types shared by the subcommands: each rejects nonsense with a one-line message."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer, got {text}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def int_list(text: str) -> list[int]:
    """`1,16,256` -> [1, 16, 256], each positive."""
    return [positive_int(part) for part in text.split(",") if part.strip()] or _empty(text)


def str_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def key_value(text: str) -> tuple[str, str]:
    """`KEY=VALUE` -> (KEY, VALUE)."""
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def repeats_spec(text: str) -> tuple[str | None, int]:
    """`N` -> (None, N) for every stage; `KEY=N` -> (KEY, N). N is a positive integer."""
    key, sep, count = text.rpartition("=")
    if sep and not key:
        raise argparse.ArgumentTypeError(f"expected N or KEY=N, got {text!r}")
    try:
        value = positive_int(count.strip())
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected N or KEY=N with N a positive integer, got {text[:80]!r}"
        ) from None
    return (key if sep else None), value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _empty(text: str) -> list[int]:
    raise argparse.ArgumentTypeError(f"expected a comma-separated list of sizes, got {text!r}")


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the description and the epilog paragraph by paragraph, but keeps a paragraph of
    examples (lines indented by two spaces) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        out = []
        for para in paragraphs:
            lines = para.splitlines()
            if any(line.startswith("  ") for line in lines):
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(super()._fill_text(para, width, indent))
        return "\n\n".join(out)

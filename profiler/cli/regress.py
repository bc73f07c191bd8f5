"""`profgen compare` and `profgen baseline`."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Registers compare and baseline (to be written with the regression issue)."""

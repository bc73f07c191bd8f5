"""Shared pytest setup: `gpu` tests skip cleanly on machines without a CUDA device."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@functools.cache
def cuda_device_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU here"
        return 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if cuda_device_count():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA

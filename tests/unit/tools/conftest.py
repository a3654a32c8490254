"""Fixtures shared by the tools' tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

AN_HOUR_NS = 3600 * 10**9


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Directories listed an hour from now (``listing.Listings``): every directory made by
    the test has settled by then (its ctime cannot be set back, as its mtime can)."""
    now = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: now() + AN_HOUR_NS)


@pytest.fixture
def threaded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions run by ``asyncio.to_thread``, in order (each still run)."""
    names: list[str] = []
    real = asyncio.to_thread

    async def counted(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        names.append(getattr(func, "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    return names

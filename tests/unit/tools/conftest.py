"""Fixtures shared by the tools' tests."""

from __future__ import annotations

import time

import pytest

AN_HOUR_NS = 3600 * 10**9


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Directories listed an hour from now (``listing.Listings``): every directory made by
    the test has settled by then (its ctime cannot be set back, as its mtime can)."""
    now = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: now() + AN_HOUR_NS)

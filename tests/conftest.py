"""Fixtures every end-to-end suite shares: the provider stub, a workspace, a state dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.provider_stub import ProviderStub


@pytest.fixture
def stub() -> Iterator[ProviderStub]:
    """A real HTTP server on loopback standing in for the model provider."""
    with ProviderStub() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """TETHER_HOME: the state dir, so no test touches the person's sessions."""
    return tmp_path / "tether-home"

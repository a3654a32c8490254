"""Where the index's build tells its progress: the editor's ``$/progress`` over LSP,
nowhere (``NoProgress``) over ACP and in tests."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Where the build's progress is told (the editor's ``$/progress``)."""

    def begin(self, title: str) -> None: ...

    def report(self, message: str, percentage: int) -> None: ...

    def end(self, message: str) -> None: ...


class NoProgress:
    def begin(self, title: str) -> None:
        pass

    def report(self, message: str, percentage: int) -> None:
        pass

    def end(self, message: str) -> None:
        pass

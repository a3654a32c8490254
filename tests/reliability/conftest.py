"""The campaigns' figures, printed at the end of the run whatever pytest captured."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reliability.harness import Report

_REPORTS: list[Report] = []


@pytest.fixture
def record() -> Iterator[list[Report]]:
    reports: list[Report] = []
    yield reports
    _REPORTS.extend(reports)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _REPORTS:
        return
    terminalreporter.section(
        "reliability campaigns (bounded; `python -m tests.reliability --long`)"
    )
    for report in _REPORTS:
        for line in report.lines():
            terminalreporter.write_line(line)

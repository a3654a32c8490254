"""CI's bounded run of every campaign: fixed seed, figures printed, no violation allowed.

A failure names its seed and iteration; ``python -m tests.reliability NAME --seed S``
replays the campaign (the long scale with ``--long``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.campaigns import CAMPAIGNS, SEED
from tests.reliability.harness import Report


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(CAMPAIGNS))
async def test_campaign(name: str, tmp_path: Path, record: list[Report]) -> None:
    entry = CAMPAIGNS[name]
    reports = await entry.run(SEED, entry.bounded, tmp_path)
    record.extend(reports)
    violations = [v for report in reports for v in report.violations]
    assert violations == [], "\n".join(violations[:20])

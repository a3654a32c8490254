"""What one turn runs with: its session, its settings, its tools' context, who decides
for the person, who watches it happen, and where its checkpoints go."""

from __future__ import annotations

from dataclasses import dataclass

from tether.agent.approval import Gate
from tether.agent.events import Updates
from tether.checkpoints.record import Checkpoints
from tether.config import TurnSettings
from tether.tools.base import ToolContext


@dataclass(frozen=True)
class TurnEnv:
    session: str
    settings: TurnSettings  # fixed for the turn: new settings apply from the next one
    ctx: ToolContext
    gate: Gate
    updates: Updates
    checkpoints: Checkpoints | None = None  # None: this turn takes none (tests, doubles)

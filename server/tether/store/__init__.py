"""Sessions, their transcripts, and remembered approval rules, in one SQLite file."""

from tether.store.rules import Rule, RuleBook
from tether.store.sessions import REPAIR_REASON, Store

__all__ = ["REPAIR_REASON", "Rule", "RuleBook", "Store"]

"""What tether keeps: sessions and their transcripts, approval rules, compactions, tasks,
checkpoints and rewinds."""

from tether.store.database import Store
from tether.store.transcript_reads import REPAIR_REASON, StoredReply

__all__ = ["REPAIR_REASON", "Store", "StoredReply"]

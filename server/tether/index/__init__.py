"""The workspace index: a persistent trigram index of the workspace's files (SQLite FTS5),
that narrows ``index-grep`` to the files that can match; see ``workspace``."""

from tether.index.progress import NoProgress, Progress
from tether.index.workspace import WorkspaceIndex, database_path

__all__ = ["NoProgress", "Progress", "WorkspaceIndex", "database_path"]

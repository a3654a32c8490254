"""The workspace index: a persistent trigram index of the workspace's files (SQLite FTS5),
that narrows ``index-grep`` to the files that can match; see ``workspace``.

Nothing is imported here: the LSP front names ``progress`` before ``initialize`` is
answered, and the index (SQLite, the tools) is imported only once the service is built."""

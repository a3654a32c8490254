"""Checkpoints and rewind: take back what the agent did, never what the person did.

``record.py`` takes a turn's checkpoints (before its first change, when it ends);
``repository.py`` is the git plumbing they are made of (a tree in the workspace's own
object store, written through a temporary index; the person's index, HEAD, branches,
stash and work tree are never touched); ``rewind.py`` takes a turn's change back on top
of the files as they are now (``undo.py``: the three-way merge of one file).
"""

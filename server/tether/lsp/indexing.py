"""The workspace index over LSP: built in the background after ``initialized`` with a
``$/progress``, and kept fresh by a file watcher and the editor's saves.

The editor's watcher is preferred (registered dynamically:
``workspace/didChangeWatchedFiles``; it watches the files already, so no more watches are
spent). Where the client lacks that registration, refuses it or does not answer, tether
watches the files itself (``index.watching``). Where neither can watch, a change made
outside the editor would go unseen: the index is not built and searches run ripgrep over
everything. Servers behind ``tether ask`` and the other terminal commands live for one
request and build no index.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from tether.errors import Refused
from tether.index.progress import NoProgress, Progress
from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
WATCH_ID = "tether-index-watch"
REGISTRATION_S = 10  # a client that leaves the registration unanswered watches nothing


class LspProgress:
    """The build's ``$/progress``, on a token the client created."""

    def __init__(self, ls: TetherServer, token: str) -> None:
        self.ls, self.token = ls, token

    def begin(self, title: str) -> None:
        self.ls.work_done_progress.begin(
            self.token, types.WorkDoneProgressBegin(title=title, percentage=0)
        )

    def report(self, message: str, percentage: int) -> None:
        self.ls.work_done_progress.report(
            self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
        )

    def end(self, message: str) -> None:
        self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))


def register(server: TetherServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TetherServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.service.in_force.files_changed(_paths(change.uri for change in params.changes))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def saved(ls: TetherServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.service.in_force.files_changed(_paths([params.text_document.uri]))


def start(ls: TetherServer) -> None:
    """Watch the files and build the index, in the background."""
    try:
        index = ls.service.index
    except Refused:
        return
    if ls.terminal_client or index is None:
        return
    task = asyncio.ensure_future(_start(ls))
    ls.background.add(task)
    task.add_done_callback(ls.background.discard)


async def _start(ls: TetherServer) -> None:
    # Watch before the walk: no change may fall between the two. Without a watcher the
    # index could not be trusted, so it is not built at all (no work for nothing).
    if not await _watch(ls) and not await ls.service.in_force.watch_files():
        return
    await ls.service.in_force.build_index(await _progress(ls))
    ls.service.in_force.files_changed([], following=True)


async def _watch(ls: TetherServer) -> bool:
    capabilities = ls.client_capabilities.workspace
    watching = capabilities.did_change_watched_files if capabilities else None
    if not (watching and watching.dynamic_registration):
        log.info("the client cannot watch files for tether: tether watches them itself")
        return False
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
    )
    registration = types.Registration(
        id=WATCH_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        async with asyncio.timeout(REGISTRATION_S):
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
    except (JsonRpcException, TimeoutError) as exc:
        log.info("the client did not watch files for tether (%r): tether watches them", exc)
        return False
    return True


async def _progress(ls: TetherServer) -> Progress:
    capabilities = ls.client_capabilities.window
    if not (capabilities and capabilities.work_done_progress):
        return NoProgress()
    token = f"tether-index-{uuid.uuid4().hex[:8]}"
    try:
        await ls.work_done_progress.create_async(token)
    except JsonRpcException as exc:
        log.info("client refused a progress token: %s", exc)
        return NoProgress()
    return LspProgress(ls, token)


def _paths(uris: Iterable[str]) -> list[Path]:
    """The files the URIs name (symbolic links above them resolved, as the index's root
    is); a URI that names no file is left out."""
    paths: list[Path] = []
    for uri in uris:
        path = to_fs_path(uri)
        if path and "\0" not in path:
            paths.append(Path(os.path.realpath(path)))
    return paths

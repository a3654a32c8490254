"""Code actions: while calls wait for approval, every document offers to decide them, and
a waiting patch of that very document offers itself as an edit to preview and apply."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from tether.errors import Refused
from tether.lsp.server import TetherServer

if TYPE_CHECKING:
    from tether.models import PendingCall


def register(server: TetherServer) -> None:
    options = types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)
    async def code_actions(
        ls: TetherServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        """While calls wait for approval, every document offers to decide them."""
        actions: list[types.CodeAction] = []
        for session, waiting in ls.service.pending_everywhere().items():
            for call in waiting:
                target = {"session": session, "calls": [call.call_id]}
                for verb, command in (("Allow", "tether.approve"), ("Deny", "tether.deny")):
                    title = f"{verb}: {call.summary}"
                    actions.append(
                        types.CodeAction(
                            title=title,
                            kind=types.CodeActionKind.QuickFix,
                            command=types.Command(title=title, command=command, arguments=[target]),
                        )
                    )
                if (patch := await _patch_action(ls, session, call, params)) is not None:
                    actions.append(patch)
        return actions


async def _patch_action(
    ls: TetherServer, session: str, call: PendingCall, params: types.CodeActionParams
) -> types.CodeAction | None:
    """For a pending patch of this very document: the patch itself, to preview and apply."""
    try:
        planned = await ls.service.planned_edit(session, call.call_id)
    except Refused:  # not a file edit, or one that no longer applies: nothing to preview
        return None
    if planned.path.resolve().as_uri() != _normal(params.text_document.uri):
        return None
    edit = ls.editor.workspace_edit(planned)
    if edit is None:
        return None
    title = f"Apply patch: {call.summary}"
    recorded = {"session": session, "call": call.call_id}
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        edit=edit,
        command=types.Command(title=title, command="tether.applied", arguments=[recorded]),
    )


def _normal(uri: str) -> str:
    path = to_fs_path(uri)
    try:
        return Path(path).resolve().as_uri() if path else uri
    except (OSError, ValueError, RuntimeError):  # no file on disk (a NUL, a symlink loop)
        return uri

"""The client's buffers as the agent's seams: reads ask ``fs/read_text_file`` (the client
answers with its unsaved text where the file is open), patches go through
``fs/write_text_file`` (into its buffer and undo) when it advertises them."""

from __future__ import annotations

import logging
from pathlib import Path

from acp import RequestError

from tether.acp.link import SESSION, Link
from tether.errors import ToolError
from tether.tools.base import FileEdit

log = logging.getLogger(__name__)


class AcpDocuments:
    """The ``Documents`` seam (and ``AsksForText``): ACP names no list of open files, so
    each read asks the client, and reads run together as they would on disk."""

    def __init__(self, link: Link) -> None:
        self.link = link

    async def text_of(self, path: Path) -> str | None:
        session, conn = SESSION.get(), self.link.conn
        if session is None or conn is None or not self.link.reads:
            return None
        try:
            answer = await conn.read_text_file(session_id=session, path=str(path))
        except RequestError as exc:  # no such file, say: the disk decides, and says why
            log.info("the client did not read %s: %s", path, exc)
            return None
        except ConnectionError:
            return None
        return answer.content

    def live_text(self, path: Path) -> str | None:
        return None  # only ``text_of`` knows: it asks

    def open_paths(self) -> list[Path]:
        return []

    def unsaved(self) -> list[Path]:
        return []


class AcpEditor:
    """The ``Editor`` seam: a patch lands in the client's buffer where it writes files."""

    def __init__(self, link: Link, documents: AcpDocuments) -> None:
        self.link = link
        self.documents = documents

    async def apply(self, edit: FileEdit, label: str) -> bool:
        session, conn = SESSION.get(), self.link.conn
        if session is not None:
            self.link.edits[session] = edit
        if session is None or conn is None or not self.link.writes:
            return False
        now = await self.documents.text_of(edit.path)
        if now is None and edit.before is not None:
            return False  # the client cannot read it: written on disk, which is checked
        if now != edit.before:
            raise ToolError(
                f"{edit.path.name} changed in the editor while the patch waited; read it again"
            )
        try:
            await conn.write_text_file(session_id=session, path=str(edit.path), content=edit.after)
        except RequestError as exc:
            raise ToolError(f"the editor could not write {edit.path.name}: {exc}") from None
        except ConnectionError:
            return False  # the client has gone: the file is written on disk
        return True

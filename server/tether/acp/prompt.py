"""An ACP prompt's content blocks as the one prompt text tether's turn takes.

Text stays as it is; a resource link names its file (workspace-relative where it can be,
so the model can read it); an embedded resource carries its text in with its URI. What
tether cannot read (images, audio, binary resources) is named, never dropped unsaid.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from tether.errors import Refused

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def prompt_text(blocks: Sequence[Block], workspace: Path) -> str:
    parts = [_part(block, workspace) for block in blocks]
    text = "\n".join(part for part in parts if part)
    if not text.strip():
        raise Refused("the prompt is empty: send a text block")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # JSON can spell a lone surrogate; no store can keep one
        raise Refused("the prompt holds text that is not Unicode (a lone surrogate)") from None
    return text


def _part(block: Block, workspace: Path) -> str:
    match block:
        case TextContentBlock(text=text):
            return text
        case ResourceContentBlock(uri=uri, name=name):
            return f"@{shown(uri, workspace) or name}"
        case EmbeddedResourceContentBlock(resource=BlobResourceContents(uri=uri, mime_type=mime)):
            return (
                f"[{shown(uri, workspace) or uri}: {mime or 'binary'} content tether cannot read]"
            )
        case EmbeddedResourceContentBlock(resource=resource):
            where = shown(resource.uri, workspace) or resource.uri
            return f'<context from="{where}">\n{resource.text}\n</context>'
        case ImageContentBlock():
            return "[an image was attached: tether cannot read images]"
        case AudioContentBlock():
            return "[audio was attached: tether cannot hear it]"
    return ""


def shown(uri: str, workspace: Path) -> str | None:
    """A ``file:`` URI as the model is shown paths: relative to the workspace inside it,
    else absolute; None for any other URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or "\0" in (raw := unquote(parsed.path)):
        return None
    path = Path(raw[1:] if len(raw) > 2 and raw[2] == ":" else raw)  # file:///C:/... on Windows
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)

"""Text as it may reach the terminal: control characters escaped, a line of output as a
terminal would leave it, a row cut to the screen's width.

Its own module because every writer to the terminal needs ``visible`` (the console, the
client's messages, the store's listings), not only the console.
"""

from __future__ import annotations

import re
import unicodedata

from tether.outbound import outbound

# Control characters move the cursor, erase lines and recolour the terminal: in text the
# model wrote they could disguise what a prompt asks about. Only \n and \t stay.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` as it may reach the terminal: control characters shown as escapes
    (``\x1b``), secrets redacted, lone surrogates escaped."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m[0]):02x}", outbound(text))


def output_line(raw: str) -> str:
    """One line of output as a terminal would leave it: what follows its last carriage
    return (a progress bar's final state), tabs expanded, control characters escaped."""
    raw = raw.removesuffix("\r")
    return visible(raw.rsplit("\r", 1)[-1].expandtabs(4))


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns (wide characters take two), "…" where cut."""
    widths = [2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text]
    if sum(widths) <= width:
        return text
    used = 0
    for index, taken in enumerate(widths):
        if used + taken > width - 1:
            return text[:index] + "…"
        used += taken
    return text

"""``command``: a shell command in the workspace root, in its own process group.

The output (stdout and stderr merged, in the order written) is read as it comes
and kept as a head and a tail, so a command printing gigabytes costs bounded
memory. A timeout, a cancellation, or background processes still holding the
output after the command ended: each kills the whole process group.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import RuleKey, ToolContext

KEEP_CHARS = 20_000  # of the output's head, and again of its tail
SUMMARY_CHARS = 120
DRAIN_S = 1.0  # after the command exits, how long its output may stay open
HIDDEN = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})

Outcome = Literal["done", "timed_out", "held_open"]

# Anything that chains, pipes, redirects, backgrounds or substitutes: such a line is
# more than one program and its arguments, so it is never remembered.
_CONTROL = (";", "&", "|", "`", "$(", ">", "<", "\n", "\r")
_EXECUTABLE = re.compile(r"[\w./+@:-]+")
_SUBCOMMAND = re.compile(r"[A-Za-z][\w:-]*")
# Programs whose arguments are another command: remembering them would allow anything.
_WRAPPERS = frozenset(
    {"sudo", "doas", "su", "env", "xargs", "exec", "eval", "nohup", "nice", "timeout", "time"}
    | {"command", "builtin", "watch", "sh", "bash", "zsh", "dash", "ksh", "fish", "csh"}
    | {"tcsh", "pwsh", "powershell", "cmd"}
)


def command_key(command: str) -> str | None:
    """What an "allow always" of ``command`` matches.

    A program and a subcommand-shaped second word make a prefix: ``git status -s`` ->
    ``git status`` (any ``git status …``). Anything else is remembered exactly as it
    stands: ``python -m pytest`` or ``find . -name x`` must never come to mean
    ``python -c …`` or ``find / -delete``. None for a line that chains or redirects,
    that does not parse, or that runs another command.
    """
    if any(operator in command for operator in _CONTROL):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or not _EXECUTABLE.fullmatch(words[0]):
        return None
    if os.path.basename(words[0]) in _WRAPPERS:
        return None
    if len(words) > 1 and _SUBCOMMAND.fullmatch(words[1]):
        return f"{words[0]} {words[1]}"
    return shlex.join(words)


def _words(key: str) -> str:
    """A rule in words; a program-and-subcommand key matches any arguments after it."""
    words = shlex.split(key)
    prefix = len(words) == 2 and _SUBCOMMAND.fullmatch(words[1])
    return f"run `{key} …` commands" if prefix else f"run exactly `{key}`"


class CommandParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1, description="The command line, run by the shell in the workspace root."
    )
    timeout_s: float = Field(
        default=120.0, gt=0, le=3600, description="Seconds before the command is killed."
    )


class _Capture:
    """The output's first and last ``keep`` characters, and what was cut between them."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.head = ""
        self.tail = ""
        self.cut_chars = 0
        self.cut_lines = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        if len(self.head) < self.keep:
            room = self.keep - len(self.head)
            self.head, text = self.head + text[:room], text[room:]
        self.tail += text
        if len(self.tail) > 2 * self.keep:  # trimmed now and then, not on every chunk
            self._trim()

    def _trim(self) -> None:
        dropped, self.tail = self.tail[: -self.keep], self.tail[-self.keep :]
        self.cut_chars += len(dropped)
        self.cut_lines += dropped.count("\n")

    def text(self) -> str:
        self.feed(b"", final=True)
        if len(self.tail) > self.keep:
            self._trim()
        if not self.cut_chars:
            return (self.head + self.tail).rstrip("\n")
        # Cut at line breaks where there are any: whole lines either side of the note.
        head, tail = self.head, self.tail
        if (end := head.rfind("\n")) >= 0:
            self.cut_chars += len(head) - end - 1
            head = head[:end]
        if (start := tail.find("\n")) >= 0:
            self.cut_chars += start + 1
            self.cut_lines += 1
            tail = tail[start + 1 :]
        note = f"[… {self.cut_chars:,} characters ({self.cut_lines:,} lines) cut …]"
        return "\n".join((head, note, tail.rstrip("\n")))


class _Watch(asyncio.SubprocessProtocol):
    """Feeds the output to a capture; says when the process exited and the output closed."""

    def __init__(self, capture: _Capture) -> None:
        self.capture = capture
        self.exited = asyncio.Event()
        self.closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.capture.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.closed.set()

    def process_exited(self) -> None:
        self.exited.set()


def environment(secrets: tuple[str, ...]) -> dict[str, str]:
    """The server's environment without tether's settings, API keys, or any secret's value."""
    hidden = {secret for secret in secrets if secret}
    return {
        name: value
        for name, value in os.environ.items()
        if not name.upper().startswith("TETHER_")
        and name.upper() not in HIDDEN
        and value not in hidden
    }


# Its own process group (a new session on POSIX), so a kill reaches all it starts.
_NEW_GROUP: dict[str, Any]
if sys.platform == "win32":
    _NEW_GROUP = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
else:
    _NEW_GROUP = {"start_new_session": True}


async def _kill(pid: int, watch: _Watch) -> None:
    """Kill the process group, then take the output written before the kill, and the exit."""
    if sys.platform == "win32":
        taskkill = ["taskkill", "/T", "/F", "/PID", str(pid)]
        await asyncio.to_thread(subprocess.run, taskkill, capture_output=True, check=False)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    both = asyncio.gather(watch.exited.wait(), watch.closed.wait())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(both, DRAIN_S)


async def _finish(watch: _Watch, limit_s: float) -> Outcome:
    """Wait for the command to exit and its output to close."""
    try:
        await asyncio.wait_for(watch.exited.wait(), limit_s)
    except TimeoutError:
        return "timed_out"
    try:
        await asyncio.wait_for(watch.closed.wait(), DRAIN_S)
    except TimeoutError:
        return "held_open"
    return "done"


def _exit_words(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"{code} (killed by {signal.Signals(-code).name})"
    return str(code)


class Command:
    name = "command"
    description = (
        "Run a command line with the system shell (sh; cmd.exe on Windows) in the workspace "
        "root, with no input. Returns 'exit code: N' on the first line, then stdout and "
        "stderr merged in the order written. Long output keeps its first and last "
        f"{KEEP_CHARS:,} characters with a note on what was cut between them. The command "
        "and every process it starts are killed after `timeout_s` seconds (default 120). "
        "A non-zero exit code is reported as an error. The person approves each command "
        "before it runs."
    )
    params = CommandParams

    def read_only(self, params: CommandParams, ctx: ToolContext) -> bool:
        return False

    def summary(self, params: CommandParams, ctx: ToolContext) -> str:
        line = " ".join(params.command.split())
        return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"

    async def preview(self, params: CommandParams, ctx: ToolContext) -> str:
        limit = f" (killed after {params.timeout_s:g} s)" if params.timeout_s != 120 else ""
        return f"in {ctx.workspace}{limit}:\n$ {params.command}"

    def rule_key(self, params: CommandParams, ctx: ToolContext) -> RuleKey | None:
        key = command_key(params.command)
        return None if key is None else RuleKey(key=key, words=_words(key))

    async def run(self, params: CommandParams, ctx: ToolContext) -> str:
        capture = _Capture(KEEP_CHARS)
        try:
            transport, watch = await asyncio.get_running_loop().subprocess_shell(
                lambda: _Watch(capture),
                params.command,
                cwd=ctx.workspace,
                env=environment(ctx.secrets),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                **_NEW_GROUP,
            )
        except OSError as exc:
            raise ToolError(f"cannot start the shell: {exc}") from None
        pid = transport.get_pid()
        try:
            outcome = await _finish(watch, params.timeout_s)
            if outcome != "done":
                await _kill(pid, watch)
        except asyncio.CancelledError:
            await _kill(pid, watch)
            raise
        finally:
            transport.close()
        output = capture.text() or "(no output)"
        code = transport.get_returncode()
        if outcome == "timed_out" or code is None:
            raise ToolError(
                f"timed out after {params.timeout_s:g} s; the command and its children were "
                f"killed\n{output}"
            )
        text = f"exit code: {_exit_words(code)}\n{output}"
        if outcome == "held_open":
            text += (
                "\n[the command exited, but processes it started kept its output open; they "
                "were killed. Redirect a background process's output to a file.]"
            )
        if code != 0:
            raise ToolError(text)
        return text

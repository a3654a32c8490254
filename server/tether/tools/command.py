"""``command``: a shell command in the workspace root, in the sandbox where there is one,
in its own process group (``process_group.py``).

The output (stdout and stderr merged, in the order written) goes to the editor as it
comes and is kept as a head and a tail. A timeout, a cancellation, or background
processes still holding the output after the command ended: each kills the whole group.
The dialog says how it will run (sandboxed, with what more, or without the sandbox and
why) and which unsaved documents it will not see; so does the result, to the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import Preview, RuleKey, ToolContext, quoted
from tether.tools.command_rules import family_of, rule_key
from tether.tools.environment import child_environment
from tether.tools.git_config import as_environment, repository_overrides
from tether.tools.process_group import NEW_GROUP, Capture, Watch, finish, kill_group
from tether.tools.sandbox import Grant

KEEP_CHARS = 20_000  # of the output's head, and again of its tail
SUMMARY_CHARS = 120


class CommandParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1, description="The command line, run by the shell in the workspace root."
    )
    timeout_s: float = Field(
        default=120.0, gt=0, le=3600, description="Seconds before the command is killed."
    )
    network: bool = Field(
        default=False,
        description="The command needs the network (the sandbox has none by default).",
    )
    writable: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Paths outside the workspace (or its .git/) the command must write.",
    )


async def _spawn(
    params: CommandParams, ctx: ToolContext, capture: Capture
) -> tuple[asyncio.SubprocessTransport, Watch]:
    """The shell, started in its own process group (in the sandbox where it is used), its
    output fed to ``capture``."""
    loop = asyncio.get_running_loop()
    options: dict[str, Any] = {
        "cwd": ctx.workspace,
        "env": await _environment(params, ctx),
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        **NEW_GROUP,
    }
    protocol = functools.partial(Watch, capture, ctx.output)
    if ctx.sandbox.used:
        argv = ctx.sandbox.argv(params.command, ctx.workspace, grant(params, ctx))
        starting = loop.subprocess_exec(protocol, *argv, **options)
    else:
        starting = loop.subprocess_shell(protocol, params.command, **options)
    spawning = asyncio.ensure_future(starting)
    try:
        # Shielded: a cancel while the shell starts must still reach its process group
        # (asyncio's own clean-up there can wait for the shell's exit forever).
        return await asyncio.shield(spawning)
    except OSError as exc:
        raise ToolError(f"cannot start the shell: {exc}") from None
    except asyncio.CancelledError:
        # A task of its own: a second cancel (tether.cancel, then $/cancelRequest) ends
        # this wait, never the kill.
        killing = asyncio.ensure_future(_killed_once_started(spawning))
        _KILLING.add(killing)
        killing.add_done_callback(_KILLING.discard)
        await asyncio.shield(killing)
        raise


_KILLING: set[asyncio.Future[None]] = set()  # held, or the loop may drop them half done


async def _killed_once_started(
    spawning: asyncio.Future[tuple[asyncio.SubprocessTransport, Watch]],
) -> None:
    with contextlib.suppress(Exception):
        transport, watch = await spawning
        await kill_group(transport.get_pid(), watch)
        transport.close()


async def _environment(params: CommandParams, ctx: ToolContext) -> dict[str, str]:
    """The scrubbed environment; for a git read a remembered rule allowed (nobody saw this
    very call), the repository's program-naming git config is overridden too."""
    env = child_environment(ctx.secrets)
    family = family_of(params.command, ctx.workspace)
    if ctx.by_rule and family is not None and family.git:
        env.update(as_environment(await repository_overrides(ctx.workspace)))
    return env


def grant(params: CommandParams, ctx: ToolContext) -> Grant:
    """What the call asks beyond the sandbox's defaults."""
    return Grant(network=params.network, writable=tuple(ctx.resolve(p) for p in params.writable))


def _sandbox_words(params: CommandParams, ctx: ToolContext) -> str:
    """How the command will run, for the dialog: what it may do beyond the defaults, or
    that it runs without the sandbox, and why."""
    if not ctx.sandbox.used:
        return f"Runs WITHOUT the sandbox, with your full rights: {ctx.sandbox.cause}"
    asked = grant(params, ctx)
    words = ["Runs in the sandbox"]
    if asked.network:
        words.append("NEEDS NETWORK")
    if asked.writable:
        shown = ", ".join(quoted(str(p)) for p in asked.writable)
        words.append(f"WRITES OUTSIDE THE WORKSPACE: {shown}")
    if not asked.widened:
        words.append("no network, writes only the workspace")
    return "; ".join(words) + "."


# What a command's output says when the sandbox, not the command, is the likely cause.
_SANDBOX_SIGNS = (
    "Read-only file system",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "nodename nor servname",
    "Connection refused",
)


def _sandbox_hint(params: CommandParams, ctx: ToolContext, output: str) -> str:
    home = str(Path.home())
    missing_at_home = "No such file or directory" in output and (
        home in output or "~/" in params.command or "$HOME" in params.command
    )
    if not ctx.sandbox.used or not (
        missing_at_home or any(sign in output for sign in _SANDBOX_SIGNS)
    ):
        return ""
    return (
        "\n[the command ran in tether's sandbox: no network, the filesystem read-only but "
        "the workspace (not its .git/), an empty home. If it failed for that, call it again "
        'with "network": true, or "writable": ["<path>"]; the person is asked.]'
    )


def _unsaved(ctx: ToolContext, most: int = 10) -> str:
    """The open documents whose text differs from their files, named for the person and
    the model ("" when there are none)."""
    paths = sorted(ctx.relative(path) for path in ctx.documents.unsaved())
    named = ", ".join(quoted(path) for path in paths[:most])
    return named + (f" and {len(paths) - most} more" if len(paths) > most else "")


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

    async def preview(self, params: CommandParams, ctx: ToolContext, budget: int) -> Preview:
        limit = f" (killed after {params.timeout_s:g} s)" if params.timeout_s != 120 else ""
        where = f"in {ctx.workspace}{limit}:\n$ "
        unsaved = _unsaved(ctx)
        after = "\n\n" + _sandbox_words(params, ctx)
        if unsaved:
            after += f"\n\nUnsaved in the editor (the command sees the files on disk): {unsaved}"
        line, room = params.command, budget - len(where) - len(after) - 120
        if len(line) <= room:
            return Preview(text=where + line + after)
        # Never only a head: the end of a long line is where `&& rm -rf ~` would hide.
        half = room // 2
        left_out = len(line) - 2 * half
        middle = f"\n[… {left_out:,} characters not shown; the command is {len(line):,} long …]\n"
        return Preview(text=where + line[:half] + middle + line[-half:] + after, whole=False)

    def rule_key(self, params: CommandParams, ctx: ToolContext) -> RuleKey | None:
        if params.network or params.writable:
            return None  # a call that asks for more is asked about, whatever the rules
        return rule_key(params.command, ctx.workspace)

    def sandboxed(self, ctx: ToolContext) -> bool:
        return ctx.sandbox.used

    def unasked(self, params: CommandParams, ctx: ToolContext) -> str | None:
        """With ``approval.commands = sandboxed``, a command that runs in the sandbox and
        asks for nothing more runs without a dialog."""
        if ctx.sandbox.unasked and ctx.sandbox.used and not (params.network or params.writable):
            return "the sandbox (approval.commands = sandboxed)"
        return None

    async def run(self, params: CommandParams, ctx: ToolContext) -> str:
        if ctx.sandbox.settings.mode == "required" and not ctx.sandbox.used:
            raise ToolError(
                "not run: the sandbox is required (sandbox.mode = required) and not "
                f"available here: {ctx.sandbox.cause}"
            )
        # Judged as it starts: the person may have saved since the dialog.
        if unsaved := _unsaved(ctx):
            note = (
                f"[note: the editor has unsaved changes in {unsaved}; this command saw those "
                "files as they are on disk, not the editor's text]"
            )
            try:
                return f"{await self._run(params, ctx)}\n{note}"
            except ToolError as exc:
                raise ToolError(f"{exc}\n{note}") from None
        return await self._run(params, ctx)

    async def _run(self, params: CommandParams, ctx: ToolContext) -> str:
        capture = Capture(KEEP_CHARS)
        transport, watch = await _spawn(params, ctx, capture)
        pid = transport.get_pid()
        try:
            outcome = await finish(watch, params.timeout_s)
            if outcome != "done":
                await kill_group(pid, watch)
        except asyncio.CancelledError:
            await kill_group(pid, watch)
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
            raise ToolError(text + _sandbox_hint(params, ctx, output))
        return text

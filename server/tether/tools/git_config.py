"""A repository's own git config, read as a hostile repository would write it.

``.git/config`` (and what it includes) can name programs that git runs on its own
during reads: ``core.fsmonitor`` on status and diff, a filter's ``clean`` on status and
diff, a diff driver's ``textconv`` on diff, log and show, an external diff, a pager.
Nothing from the repository may run a program without the person's approval, so the
git that tether runs unasked (its read-only tools, and a command a remembered rule
allows) runs with every such key of the repository's own scopes overridden by a
harmless value. The person's global and system config are theirs and stay in force
(a ``git lfs`` filter installed globally keeps working).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from tether.tools.environment import child_environment

# Keys (lower-case, as git prints them) naming a program, with a value that runs none.
NEUTRAL: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"core\.fsmonitor"), "false"),
    (re.compile(r"core\.(pager|editor|sshcommand|askpass|hookspath)"), ""),
    (re.compile(r"pager\..+"), "cat"),
    (re.compile(r"filter\..+\.(clean|smudge|process)"), ""),
    (re.compile(r"diff\..+\.textconv"), "cat"),
    (re.compile(r"diff\..+\.command|diff\.external"), "true"),
    (re.compile(r"gpg\.(.+\.)?program"), "false"),
    (re.compile(r"credential\..*helper"), ""),
)
# Always, whatever any scope says: a read never runs hooks or an fsmonitor.
ALWAYS = (("core.fsmonitor", "false"), ("core.hookspath", "/dev/null/no-hooks"))
UNTRUSTED_SCOPES = ("local", "worktree", "command")
ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # never wait on a credential prompt nobody can answer
    "GIT_OPTIONAL_LOCKS": "0",  # a read must not take index.lock from the person's own git
    "GIT_PAGER": "cat",
}


async def repository_overrides(workspace: Path) -> list[tuple[str, str]]:
    """Each program-naming key of the repository's own config, with its harmless value."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *("git", "--no-pager", "config", "--list", "--show-scope", "--includes", "-z"),
            cwd=workspace,
            env={**child_environment(()), **ENV},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return []
    try:
        out, _ = await proc.communicate()
    finally:
        if proc.returncode is None:  # cancelled: git must not outlive the call
            proc.kill()
            await proc.wait()
    return neutralised(out.decode(errors="replace"))


def neutralised(listing: str) -> list[tuple[str, str]]:
    """From ``git config --list --show-scope -z`` output: the overrides it calls for."""
    fields = listing.split("\0")
    overrides: dict[str, str] = dict(ALWAYS)
    for scope, entry in zip(fields[::2], fields[1::2], strict=False):
        key = entry.split("\n", 1)[0].lower()
        if scope not in UNTRUSTED_SCOPES:
            continue
        for pattern, harmless in NEUTRAL:
            if pattern.fullmatch(key):
                overrides[key] = harmless
    return sorted(overrides.items())


def as_arguments(overrides: list[tuple[str, str]]) -> list[str]:
    return [arg for key, value in overrides for arg in ("-c", f"{key}={value}")]


def as_environment(overrides: list[tuple[str, str]]) -> dict[str, str]:
    """The same overrides for a git that tether does not start itself (a command)."""
    env = {"GIT_CONFIG_COUNT": str(len(overrides)), **ENV}
    for n, (key, value) in enumerate(overrides):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    return env

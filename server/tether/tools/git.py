"""``git-status``, ``git-diff``, ``git-head``: the git CLI, read-only, in the workspace.

git runs with the scrubbed environment every child gets, and with every program the
repository's own config names (fsmonitor, filters, textconv, external diff, pager,
hooks) overridden (``git_config``): a read runs no program from the repository.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools.base import ToolContext, quoted
from tether.tools.environment import child_environment
from tether.tools.git_config import as_arguments, repository_overrides
from tether.tools.paths import checked, reads_inside, shown

_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # never wait on a credential prompt nobody can answer
    "LC_ALL": "C",  # messages we recognise, in English
    "GIT_OPTIONAL_LOCKS": "0",  # a read must not take index.lock from the person's own git
    "GIT_LITERAL_PATHSPECS": "1",  # a path is a path, not a pattern or ":(magic)"
    "GIT_PAGER": "cat",
    "GIT_EXTERNAL_DIFF": "",
}
MAX_REV_CHARS = 4096  # a revision or a range of two: far past any ref name git makes
# Plain text whatever the person's config says: no colour, no octal-quoted names. And
# git diff refreshes the stat data of files touched but unchanged in the person's index,
# taking index.lock, whatever GIT_OPTIONAL_LOCKS says: autoRefreshIndex off stops it.
_CONFIG = (
    *("-c", "color.ui=false", "-c", "core.quotepath=off", "-c", "log.showSignature=false"),
    *("-c", "diff.autoRefreshIndex=false"),
)


@dataclass(frozen=True)
class _GitOutput:
    out: str
    err: str
    code: int
    cut: bool


async def _git(ctx: ToolContext, *args: str) -> _GitOutput:
    overrides = as_arguments(await repository_overrides(ctx.workspace))
    try:
        proc = await asyncio.create_subprocess_exec(
            *("git", "--no-pager", *_CONFIG, *overrides, *args),
            cwd=ctx.workspace,
            env={**child_environment(ctx.secrets), **_ENV},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise ToolError("cannot run git: is it installed?") from None
    except OSError as exc:  # e.g. arguments past what the system hands a program
        raise ToolError(f"cannot run git: {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    cap = ctx.settings.max_read_bytes
    errors = asyncio.ensure_future(proc.stderr.read())
    try:
        try:
            out = await proc.stdout.readexactly(cap + 1)
        except asyncio.IncompleteReadError as exc:  # the usual case: git ended first
            out = exc.partial
        if cut := len(out) > cap:
            proc.kill()  # the rest would not be shown; do not wait for git to write it
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        text = (await errors).decode(errors="replace").strip()
    if "not a git repository" in text.lower():  # "Not a ..." from git diff
        raise ToolError("the workspace is not a git repository")
    code = await proc.wait()  # already exited: this only reads the status
    # Names git stores need not be UTF-8: shown escaped (caf\xe9.txt), and usable again.
    shown = escape_surrogates(out[:cap].decode("utf-8", "surrogateescape"))
    return _GitOutput(shown, text, code, cut)


def _checked(run: _GitOutput, what: str, narrow: str = "") -> str:
    if run.code != 0 and not run.cut:
        raise ToolError(f"{what} failed: {run.err}")
    if run.cut:
        return f"{run.out}\n[output cut at {len(run.out)} characters{narrow}]"
    return run.out.rstrip("\n")


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GitStatus:
    name = "git-status"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Show the workspace's git status in short form: a '## branch...upstream' line, then "
        "one line per changed path as 'XY path' (X = staged, Y = unstaged; M modified, "
        "A added, D deleted, R renamed, ?? untracked)."
    )
    params = NoParams

    def read_only(self, params: NoParams, ctx: ToolContext) -> bool:
        return True

    def summary(self, params: NoParams, ctx: ToolContext) -> str:
        return "git status"

    async def run(self, params: NoParams, ctx: ToolContext) -> str:
        status = ("status", "--short", "--branch", "--ignore-submodules=all")
        out = _checked(await _git(ctx, *status), "git status")
        if "\n" not in out:
            out += "\nnothing to commit, working tree clean"
        return out


class GitDiffParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, description="Only changes to this file or directory.")
    staged: bool = Field(
        default=False, description="Staged changes (index against the commit) instead."
    )
    rev: str | None = Field(
        default=None,
        description=(
            "Compare against this commit ('HEAD', 'main', 'HEAD~3', 'abc123'), or give a "
            "range ('main..HEAD') to see what those commits changed."
        ),
    )

    @field_validator("rev")
    @classmethod
    def _no_options(cls, rev: str | None) -> str | None:
        if rev is not None and (not rev.strip() or rev.startswith("-")):
            raise ValueError("rev must name a revision and must not start with '-'")
        if rev is not None and len(rev) > MAX_REV_CHARS:
            raise ValueError(f"rev is {len(rev):,} characters long; at most {MAX_REV_CHARS:,}")
        if rev is not None and not _an_argument(rev):
            raise ValueError("rev must not hold a NUL character or a lone surrogate")
        return rev


def _an_argument(text: str) -> bool:
    """Whether ``text`` can be handed to a program as one argument (as bytes, the way
    a name that is not UTF-8 is held in Python)."""
    try:
        return b"\0" not in os.fsencode(text)
    except UnicodeEncodeError:
        return False


class GitDiff:
    name = "git-diff"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Show a unified diff. By default the unstaged changes (working tree against the "
        "index); `staged` shows what is staged; `rev` compares the working tree (or, with "
        "`staged`, the index) against that commit, or shows a range such as 'main..HEAD'. "
        "Untracked files are not in diffs: git-status lists them. Long diffs are cut; narrow "
        "them with `path`."
    )
    params = GitDiffParams

    def read_only(self, params: GitDiffParams, ctx: ToolContext) -> bool:
        return params.path is None or reads_inside(ctx, params.path)

    def summary(self, params: GitDiffParams, ctx: ToolContext) -> str:
        words = ["git diff", "--cached" if params.staged else "", quoted(params.rev or "")]
        words += ["--", shown(ctx, params.path)] if params.path else []
        return " ".join(word for word in words if word)

    @staticmethod
    def _args(params: GitDiffParams, path: str | None) -> list[str]:
        args = ["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"]
        if params.staged:
            args.append("--cached")
        if params.rev:
            args += ["--end-of-options", params.rev]
        return [*args, "--", *([path] if path else [])]

    async def run(self, params: GitDiffParams, ctx: ToolContext) -> str:
        # Judged again now, and named as it is on disk (an escaped name resolves to it).
        path = os.fsdecode(checked(ctx, params.path)) if params.path else None
        args = self._args(params, path)
        out = _checked(await _git(ctx, *args), "git diff", "; narrow it with a path")
        if out:
            return out
        what = "staged changes" if params.staged else "unstaged changes"
        if params.rev:
            what = f"changes against {params.rev}" + (" in the index" if params.staged else "")
        return f"no {what}" + (f" in {params.path}" if params.path else "")


class GitHead:
    name = "git-head"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Show the current commit: its hash, the branch checked out (or 'detached'), and "
        "the commit's subject line."
    )
    params = NoParams

    def read_only(self, params: NoParams, ctx: ToolContext) -> bool:
        return True

    def summary(self, params: NoParams, ctx: ToolContext) -> str:
        return "git head"

    async def run(self, params: NoParams, ctx: ToolContext) -> str:
        # Both awaited to their end, failed or not: a git left running when the other
        # fails (outside a repository) would outlive the call.
        log, ref = await asyncio.gather(
            _git(ctx, "log", "-1", "--no-show-signature", "--format=%H%x00%s"),
            _git(ctx, "symbolic-ref", "--short", "-q", "HEAD"),
            return_exceptions=True,
        )
        if isinstance(log, BaseException):
            raise log
        if isinstance(ref, BaseException):
            raise ref
        branch = ref.out.strip() if ref.code == 0 else "detached"
        if log.code != 0 and "does not have any commits" in log.err:
            return f"commit: none (the repository has no commits yet)\nbranch: {branch}"
        commit, _, subject = _checked(log, "git log").partition("\0")
        return f"commit: {commit}\nbranch: {branch}\nsubject: {subject}"

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.unit.tools import (
    call,
    cancel_once_started,
    context,
    git,
    gone,
    init_repo,
    read_only,
    sleeper,
    summary,
    write,
)
from tether.errors import ToolError
from tether.tools.git import GitDiff, GitHead, GitStatus, _git

STATUS, DIFF, HEAD = GitStatus(), GitDiff(), GitHead()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write(repo, "a.txt", "one\n")
    write(repo, "src/b.txt", "bee\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first commit")
    write(repo, "a.txt", "one\ntwo\n")
    git(repo, "commit", "-q", "-am", "second commit")
    return repo


async def test_status_lists_staged_unstaged_and_untracked(repo: Path) -> None:
    write(repo, "a.txt", "changed\n")
    write(repo, "src/b.txt", "staged\n")
    git(repo, "add", "src/b.txt")
    write(repo, "new.txt", "")
    assert (await call(STATUS, context(repo))).splitlines() == [
        "## main",
        " M a.txt",
        "M  src/b.txt",
        "?? new.txt",
    ]


async def test_a_clean_tree_says_so(repo: Path) -> None:
    assert await call(STATUS, context(repo)) == "## main\nnothing to commit, working tree clean"


async def test_diff_shows_unstaged_changes_by_default(repo: Path) -> None:
    write(repo, "a.txt", "one\ntwo\nthree\n")
    write(repo, "src/b.txt", "staged\n")
    git(repo, "add", "src/b.txt")
    out = await call(DIFF, context(repo))
    assert "+three" in out
    assert "src/b.txt" not in out
    staged = await call(DIFF, context(repo), staged=True)
    assert "+staged" in staged
    assert "a.txt" not in staged


@pytest.mark.parametrize("arguments", [{}, {"rev": "HEAD"}, {"path": "a.txt"}])
async def test_a_diff_never_writes_the_persons_index(repo: Path, arguments: dict[str, str]) -> None:
    """git diff refreshes the index's stat data of files touched but unchanged, taking
    index.lock, whatever GIT_OPTIONAL_LOCKS says (tool-fuzz campaign, long, seed 20261201)."""
    os.utime(repo / "a.txt", (1_000_000_000, 1_000_000_000))  # touched, the same text
    write(repo, "src/b.txt", "changed\n")
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    out = await call(DIFF, context(repo), **arguments)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    assert "a/a.txt" not in out  # a touch is no change
    assert ("+changed" in out) == ("path" not in arguments)


async def test_diff_against_a_rev_and_for_a_path(repo: Path) -> None:
    write(repo, "src/b.txt", "bee\nbuzz\n")
    ctx = context(repo)
    against_first = await call(DIFF, ctx, rev="HEAD~1")
    assert "+two" in against_first
    assert "+buzz" in against_first
    only_a = await call(DIFF, ctx, rev="HEAD~1", path="a.txt")
    assert "+two" in only_a
    assert "buzz" not in only_a
    assert "+two" in await call(DIFF, ctx, rev="HEAD~1..HEAD")


async def test_no_changes_is_said_plainly(repo: Path) -> None:
    ctx = context(repo)
    assert await call(DIFF, ctx) == "no unstaged changes"
    assert await call(DIFF, ctx, staged=True, path="src") == "no staged changes in src"
    assert await call(DIFF, ctx, rev="HEAD") == "no changes against HEAD"


async def test_paths_are_literal_not_patterns(repo: Path) -> None:
    write(repo, "a.txt", "changed\n")
    assert await call(DIFF, context(repo), path="*.txt") == "no unstaged changes in *.txt"


async def test_a_bad_rev_is_reported(repo: Path) -> None:
    with pytest.raises(ToolError, match=r"git diff failed: .*nosuchbranch"):
        await call(DIFF, context(repo), rev="nosuchbranch")


@pytest.mark.parametrize("rev", ["-p", "--output=/tmp/x", "--no-index", " "])
def test_a_rev_cannot_smuggle_options(rev: str) -> None:
    with pytest.raises(ValueError, match=r"must not start with '-'"):
        DIFF.params.model_validate({"rev": rev})


@pytest.mark.parametrize("rev", ["HEAD\0", "\ud800"])
def test_a_rev_git_cannot_be_handed_is_refused_before_git_runs(rev: str) -> None:
    # Found by tool-fuzz: git was handed it, and the call crashed ("embedded null byte",
    # "surrogates not allowed").
    with pytest.raises(ValueError, match=r"must not hold a NUL character or a lone surrogate"):
        DIFF.params.model_validate({"rev": rev})


def test_a_rev_of_megabytes_is_refused_before_git_runs() -> None:
    # Found by tool-fuzz (long run): git could not be started with it ("Argument list too
    # long"), and the call crashed.
    with pytest.raises(ValueError, match=r"rev is 1,048,576 characters long; at most 4,096"):
        DIFF.params.model_validate({"rev": "a" * 2**20})


async def test_git_that_cannot_be_started_is_a_tool_error(repo: Path) -> None:
    with pytest.raises(ToolError, match=r"^cannot run git: Argument list too long$"):
        await _git(context(repo), "log", "x" * 2**20)


async def test_a_rev_named_by_bytes_that_are_not_utf8_is_handed_to_git(repo: Path) -> None:
    with pytest.raises(ToolError, match=r"git diff failed"):
        await call(DIFF, context(repo), rev="caf\udce9")


def test_a_summary_quotes_a_huge_rev_and_path_cut_short(repo: Path) -> None:
    # Found by tool-fuzz: a summary (sent to the editor) quoted megabytes whole.
    line = summary(DIFF, context(repo), rev="r" * 4096, path="p" * 100_000)
    assert len(line) < 1_000 and "[4,096 characters]" in line and "[100,000 characters]" in line


async def test_long_diffs_are_cut_with_a_note(repo: Path) -> None:
    write(repo, "a.txt", "".join(f"line {n}\n" for n in range(5000)))
    out = await call(DIFF, context(repo, max_read_bytes=2000))
    assert len(out) < 2200
    assert out.endswith("[output cut at 2000 characters; narrow it with a path]")


async def test_head_names_commit_branch_and_subject(repo: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert await call(HEAD, context(repo)) == (
        f"commit: {sha}\nbranch: main\nsubject: second commit"
    )
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    out = await call(HEAD, context(repo))
    assert out.splitlines()[1:] == ["branch: detached", "subject: first commit"]


async def test_an_empty_repository_has_sensible_answers(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "empty")
    ctx = context(repo)
    assert await call(HEAD, ctx) == (
        "commit: none (the repository has no commits yet)\nbranch: main"
    )
    assert (await call(STATUS, ctx)).startswith("## No commits yet on main")
    assert await call(DIFF, ctx) == "no unstaged changes"


@pytest.mark.parametrize("tool", [STATUS, DIFF, HEAD])
async def test_not_a_repository(tmp_path: Path, tool: GitStatus | GitDiff | GitHead) -> None:
    with pytest.raises(ToolError, match=r"^the workspace is not a git repository$"):
        await call(tool, context(tmp_path))


async def test_outside_a_repository_git_head_leaves_no_git_running(tmp_path: Path) -> None:
    """Its two gits fail apart: the call ends once both have (a task left starting a
    process when the event loop closes waits forever on Python 3.11)."""
    for _ in range(5):
        with pytest.raises(ToolError, match="not a git repository"):
            await call(HEAD, context(tmp_path))
        assert asyncio.all_tasks() == {asyncio.current_task()}


def test_read_only_unless_a_diff_path_leaves_the_workspace(repo: Path) -> None:
    ctx = context(repo)
    assert read_only(STATUS, ctx)
    assert read_only(HEAD, ctx)
    assert read_only(DIFF, ctx, path="a.txt")
    assert not read_only(DIFF, ctx, path="../elsewhere")


def test_summaries_and_params(repo: Path) -> None:
    ctx = context(repo)
    staged = summary(DIFF, ctx, staged=True, rev="HEAD~2", path="src")
    assert staged == "git diff --cached HEAD~2 -- src"
    assert summary(DIFF, ctx) == "git diff"
    assert summary(STATUS, ctx) == "git status"
    assert summary(HEAD, ctx) == "git head"
    with pytest.raises(ValueError):
        STATUS.params.model_validate({"verbose": True})


async def test_cancelling_a_git_call_kills_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, pid_file = sleeper(tmp_path / "bin" / "git")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    task = asyncio.ensure_future(call(STATUS, context(tmp_path)))
    assert gone(await cancel_once_started(task, pid_file))


async def test_names_that_are_not_utf8_are_shown_escaped_and_work_again(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    (repo / name).write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "odd name")
    (repo / name).write_text("one\ntwo\n")

    status = await call(STATUS, context(repo))
    assert " M caf\\xe9.txt" in status

    diff = await call(DIFF, context(repo), path="caf\\xe9.txt")  # as the model copies it
    assert "+two" in diff and "caf\\xe9.txt" in diff
    diff.encode("utf-8")  # no lone surrogate left to break a sink

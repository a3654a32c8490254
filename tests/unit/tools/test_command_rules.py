"""What "Allow always" of a command remembers: a vetted read-only family as a prefix,
anything else as its exact raw text; a prefix never covers what runs a program, writes a
file or reaches outside the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.tools.command_rules import FAMILIES, Family, rule_key

WS = Path("/work/ws")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("git status -s", "prefix git status"),
        ("git diff --stat src", "prefix git diff"),
        ("git log --oneline -5", "prefix git log"),
        ("git branch --list 'feat/*'", "prefix git branch --list"),
        ("ls -la src", "prefix ls"),
        ("rg -n TODO src", "prefix rg"),
        ("pytest -x tests/unit", "prefix pytest"),
        ("python -m pytest -k 'a and not b'", "prefix python -m pytest"),
        ("go test -count=1 ./...", "prefix go test"),
        ("npm test", "prefix npm test"),
        ("cargo test --release", "prefix cargo test"),
        # Everything else is remembered exactly, byte for byte.
        ("find src -name '*.pyc'", "exact find src -name '*.pyc'"),
        ("rm build", "exact rm build"),
        ("cat Makefile", "exact cat Makefile"),
        ("git config user.name", "exact git config user.name"),
        ("rm -rf '~/x'", "exact rm -rf '~/x'"),
        ("make && make test", "exact make && make test"),
        # A family with an argument that runs a program, writes a file or reaches out.
        ("git grep -O'sh -c id' TODO", "exact git grep -O'sh -c id' TODO"),
        ("git log --output=/tmp/x", "exact git log --output=/tmp/x"),
        ("git log --outp=x", "exact git log --outp=x"),  # git takes abbreviations
        ("git diff --ext-diff", "exact git diff --ext-diff"),
        ("git diff --no-index /etc/passwd x", "exact git diff --no-index /etc/passwd x"),
        ("rg --pre cat x", "exact rg --pre cat x"),
        ("rg -z x", "exact rg -z x"),
        ("pytest --basetemp=~", "exact pytest --basetemp=~"),
        ("pytest -o cache_dir=/tmp", "exact pytest -o cache_dir=/tmp"),
        ("go test -exec evil ./...", "exact go test -exec evil ./..."),
        (
            "cargo test --config 'target.x.runner=\"sh\"'",
            "exact cargo test --config 'target.x.runner=\"sh\"'",
        ),
        ("ls ~/.ssh", "exact ls ~/.ssh"),
        ("ls /etc", "exact ls /etc"),
        ("ls ../..", "exact ls ../.."),
        ("git status; rm -rf ~", "exact git status; rm -rf ~"),
        ("git status > out", "exact git status > out"),
        ("rg $(whoami)", "exact rg $(whoami)"),
        ("git status #\x1b[2K", "exact git status #\x1b[2K"),
    ],
)
def test_rule_keys(line: str, key: str) -> None:
    assert rule_key(line, WS).key == key


def test_the_words_say_what_the_rule_covers() -> None:
    assert rule_key("rm build", WS).words == "run exactly `rm build`"
    prefix = rule_key("git status -s", WS).words
    assert prefix.startswith("run `git status …` commands") and "another program" in prefix


def test_a_path_inside_the_workspace_stays_covered() -> None:
    assert rule_key(f"ls {WS}/src ../ws/src", WS).key == "prefix ls"


SHELL_OR_OUTSIDE = st.sampled_from(
    [
        *("; rm -rf ~", "&& rm x", "|| x", "| sh", "> out", ">> out", "< in", "2>&1", "& bg"),
        *("$(id)", "`id`", "$HOME", "${HOME}", "\nrm x", "\rx", "(x)", "{a,b}", "# x", "\\x"),
        *("~/.ssh/id_rsa", "~", "/etc/passwd", "../../x", "--file=/etc/passwd", "--x=~/y"),
    ]
)
WORDS = st.lists(st.sampled_from(["-s", "-x", "src", "tests", "a.py", "-k", "name", "--stat"]))
FAMILY = st.sampled_from(FAMILIES)


@given(FAMILY, WORDS, SHELL_OR_OUTSIDE, WORDS)
def test_no_shell_work_or_outside_path_is_covered_by_a_prefix(
    family: Family, before: list[str], danger: str, after: list[str]
) -> None:
    """A control operator, a redirection, a substitution, a variable or a path outside
    the workspace anywhere in the line: no rule remembered from another command covers it."""
    safe = " ".join([*family.prefix, *before])
    dangerous = " ".join([*family.prefix, *before, danger, *after])
    assert rule_key(dangerous, WS) != rule_key(safe, WS)
    assert rule_key(dangerous, WS).key == f"exact {dangerous}"


@st.composite
def dangerous_option(draw: st.DrawFn) -> tuple[Family, str]:
    family = draw(FAMILY.filter(lambda f: bool(f.never)))
    option = draw(st.sampled_from(family.never))
    forms = [option, f"{option}=x"]
    if option.startswith("--"):
        forms.append(option[: max(4, len(option) - 2)])  # an abbreviation git would take
    elif family.attached:
        forms.append(f"{option}x")
    return family, draw(st.sampled_from(forms))


@given(dangerous_option(), WORDS, WORDS)
def test_no_option_that_runs_a_program_or_writes_a_file_is_covered(
    danger: tuple[Family, str], before: list[str], after: list[str]
) -> None:
    family, option = danger
    safe = " ".join([*family.prefix, *before])
    dangerous = " ".join([*family.prefix, *before, option, *after])
    assert rule_key(dangerous, WS) != rule_key(safe, WS)

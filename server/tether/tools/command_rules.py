"""What an "Allow always" of a command remembers, and so what it later runs unasked.

Two kinds of rule, and nothing in between:

- **exact**: the command's raw text, byte for byte (never normalised: `rm -rf '~/x'`
  and `rm -rf ~/x` are different commands). Every command can be remembered so.
- **prefix**: a vetted family of read-only commands (``git status``, ``ls``, ``rg``,
  test runners…) with any further arguments, but only arguments that are plain words:
  a line with a control operator, a redirection, a substitution, a variable, a path
  outside the workspace (absolute, ``~``, ``..`` above the root), or one of the
  family's options that runs a program or writes a file (``-exec``, ``--pre``,
  ``--output``…) is never covered by a prefix rule; it may still match an exact one.

A rule is matched by equality of keys, so a call is covered exactly when the key it
computes is one the person remembered.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tether.tools.base import RuleKey


@dataclass(frozen=True)
class Family:
    prefix: tuple[str, ...]
    never: tuple[str, ...] = ()  # options that run a program or write a file
    git: bool = False  # run with the repository's own program-naming config neutralised
    attached: bool = True  # a one-letter option may carry its value attached (``-Ocmd``)

    def covers(self, words: list[str]) -> bool:
        if tuple(words[: len(self.prefix)]) != self.prefix:
            return False
        rest = words[len(self.prefix) :]
        return not any(self._is(word, option) for word in rest for option in self.never)

    def _is(self, word: str, option: str) -> bool:
        """``word`` is ``option``, ``option=value``, its value attached, or (git, npm and
        argparse take unambiguous abbreviations) a long option's abbreviation."""
        name = word.split("=", 1)[0]
        if name == option:
            return True
        if option.startswith("--"):
            return len(name) > 3 and option.startswith(name)
        one_letter = len(option) == 2 and option[0] == "-"
        return self.attached and one_letter and word.startswith(option)


_GIT_WRITES = ("--output", "--ext-diff", "--textconv", "--no-index", "--show-signature")
_PYTEST = (
    "--basetemp",  # emptied before use: --basetemp=~ would delete a home directory
    "--junitxml",
    "--junit-xml",
    "--resultlog",
    "--result-log",
    "-o",  # --override-ini: cache_dir and friends write anywhere
    "--override-ini",
    "--cov-report",
)
FAMILIES = (
    Family(("git", "status"), _GIT_WRITES, git=True),
    Family(("git", "diff"), _GIT_WRITES, git=True),
    Family(("git", "log"), _GIT_WRITES, git=True),
    Family(("git", "show"), _GIT_WRITES, git=True),
    Family(("git", "blame"), (*_GIT_WRITES, "--contents"), git=True),
    Family(("git", "branch", "--list"), _GIT_WRITES, git=True),
    Family(("git", "branch", "--show-current"), _GIT_WRITES, git=True),
    Family(("git", "ls-files"), _GIT_WRITES, git=True),
    Family(("git", "rev-parse"), _GIT_WRITES, git=True),
    Family(("git", "grep"), (*_GIT_WRITES, "-O", "--open-files-in-pager", "--no-index"), git=True),
    Family(("ls",)),
    Family(("rg",), ("--pre", "--pre-glob", "-z", "--search-zip", "--hostname-bin")),
    Family(("pytest",), _PYTEST),
    Family(("python", "-m", "pytest"), _PYTEST),
    Family(("python3", "-m", "pytest"), _PYTEST),
    Family(("npm", "test"), ("--script-shell", "--prefix", "--userconfig", "--globalconfig")),
    Family(("npm", "run", "test"), ("--script-shell", "--prefix", "--userconfig")),
    Family(("yarn", "test")),
    Family(("pnpm", "test")),
    Family(("cargo", "test"), ("--config", "-Z", "--target-dir", "--manifest-path")),
    Family(
        ("go", "test"),
        (
            *("-exec", "-toolexec", "-o", "-c", "-outputdir", "-trace", "-coverprofile"),
            *("-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-modfile"),
        ),
        attached=False,  # go's options are whole words: -count=1 is not -c
    ),
)

# Anything the shell would do besides running one program with these words: chaining,
# pipes, redirection, substitution, variables, escapes, comments, brace expansion.
_SHELL = re.compile(r"[;&|<>`$\\\n\r(){}#]")


def _reaches_outside(word: str, workspace: Path) -> bool:
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    if value.startswith("~"):
        return True
    if not (value.startswith("/") or ".." in Path(value).parts):
        return False
    where = Path(os.path.normpath(workspace / value))
    return not (where == workspace or where.is_relative_to(workspace))


def family_of(command: str, workspace: Path) -> Family | None:
    """The vetted family whose prefix rule would cover ``command``, if one would."""
    if _SHELL.search(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if any(_reaches_outside(word, workspace) for word in words):
        return None
    return next((family for family in FAMILIES if family.covers(words)), None)


def rule_key(command: str, workspace: Path) -> RuleKey:
    """The rule an "Allow always" of ``command`` would remember."""
    family = family_of(command, workspace)
    if family is None:
        return RuleKey(key=f"exact {command}", words=f"run exactly `{command}`")
    prefix = " ".join(family.prefix)
    return RuleKey(
        key=f"prefix {prefix}",
        words=(
            f"run `{prefix} …` commands (any arguments, but none that run another "
            "program, write a file or reach outside the workspace)"
        ),
    )

"""The sandbox a ``command`` runs in: bubblewrap (``bwrap``) on Linux.

Inside, the whole filesystem is read-only; the workspace is writable except its
``.git/``; ``/tmp`` is private; ``$HOME`` is an empty private directory (so ``~/.ssh``,
``~/.aws``, shell histories are not there) but for the paths the person lists; there is
no network unless granted; the command has its own PID namespace and session and dies
with tether. Whether the sandbox works is checked by running a probe in it (``check``),
never assumed: each way it fails has its own plain message, and it is never switched off
without the person being told.

On macOS ``sandbox-exec`` with a generated profile would play this part, and on Windows
an AppContainer; neither is built yet: there ``check`` says so and commands ask.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tether.config import SandboxSettings

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Grant:
    """What one call asks beyond the defaults (the person sees it in the dialog)."""

    network: bool = False
    writable: tuple[Path, ...] = ()

    @property
    def widened(self) -> bool:
        return self.network or bool(self.writable)


@dataclass(frozen=True)
class Sandbox:
    """The sandbox as this server found it: ``cause`` says why it is not there."""

    settings: SandboxSettings = field(default_factory=lambda: SandboxSettings(mode="off"))
    available: bool = False
    cause: str = "the sandbox is off (sandbox.mode = off)"
    unasked: bool = False  # approval.commands = sandboxed

    @property
    def used(self) -> bool:
        return self.available and self.settings.mode != "off"

    def argv(self, command: str, workspace: Path, grant: Grant) -> list[str]:
        """The bwrap command line that runs ``command`` with ``sh -c`` in the sandbox."""
        home = Path.home()
        args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--tmpfs", "/tmp", "--tmpfs", str(home)]
        for path in toolchains(home):
            args += _bind("--ro-bind-try", path)
        for raw in self.settings.read_paths:
            args += _bind("--ro-bind-try", Path(raw).expanduser())
        for raw in self.settings.write_paths:
            args += _bind("--bind-try", Path(raw).expanduser())
        args += ["--bind", str(workspace), str(workspace)]
        git = workspace / ".git"
        if git.exists() and not self.settings.git_writable:
            args += ["--ro-bind", str(git), str(git)]
        for path in grant.writable:
            args += _bind("--bind-try", path)
        args += ["--unshare-all"]
        if self.settings.network or grant.network:
            args += ["--share-net"]
        # No --new-session: everything in the sandbox must stay in the process group that
        # a cancel or a timeout kills. With it, the sandbox's pid 1 leaves that group
        # before it arms --die-with-parent, and a kill in between left the whole sandbox
        # running (27 of 1,000 kills in its first 6 ms; none without). The group is a new
        # session with no input (command.py), so there is no terminal to reach anyway.
        args += ["--die-with-parent", "--chdir", str(workspace)]
        args += ["--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", str(home)]
        return [*args, "--", "/bin/sh", "-c", command]


# Dot-directories of a home whose contents are more than a toolchain: only the exact
# PATH entry inside them is shown.
_MIXED = {".local", ".config", ".cache"}


def toolchains(home: Path, tmp: Path = Path("/tmp")) -> list[Path]:
    """The toolchains the commands' PATH and tether's own Python use that the sandbox's
    private home and ``/tmp`` would hide, shown read-only: ``~/.pyenv``, ``~/.cargo``,
    ``~/.nvm``…, and a virtual environment under ``/tmp`` (its root, not all of ``/tmp``).
    An empty home must not take ``python`` or ``cargo`` away; nothing else is shown."""
    wanted = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    wanted += [Path(sys.prefix), Path(sys.base_prefix)]
    shown: list[Path] = []
    for entry in wanted:
        for path in {entry, entry.resolve()}:
            chosen = _in_home(path, home) if path.is_absolute() else None
            if chosen is None and path.is_absolute() and path.is_relative_to(tmp) and path != tmp:
                chosen = path.parent if path.name == "bin" else path  # the prefix of a bin/
            if chosen is not None and chosen not in shown:
                shown.append(chosen)
    return shown


def _in_home(path: Path, home: Path) -> Path | None:
    if not path.is_relative_to(home) or path == home:
        return None
    top = home / path.relative_to(home).parts[0]
    return path if top.name in _MIXED or not top.name.startswith(".") else top


def _bind(option: str, path: Path) -> list[str]:
    return [option, str(path), str(path)]


def check(settings: SandboxSettings, unasked: bool = False) -> Sandbox:
    """Run the probe in the sandbox: the sandbox is used only where every check of it
    holds. Blocking (a few tens of milliseconds): run it off the event loop."""
    if settings.mode == "off":
        return Sandbox(settings, False, "the sandbox is off (sandbox.mode = off)", unasked)
    cause = _unavailable()
    if cause is None:
        try:
            cause = _probe(Sandbox(settings, True))
        except Exception as exc:  # a probe that fails in a way not foreseen: no sandbox, said
            log.exception("the sandbox probe failed")
            cause = f"the sandbox probe failed: {exc!r}"
    return Sandbox(settings, cause is None, cause or "", unasked)


def _unavailable() -> str | None:
    if not sys.platform.startswith("linux"):
        return (
            f"no sandbox on {sys.platform} yet (Linux uses bubblewrap; macOS's sandbox-exec "
            "is not wired in): commands run with your rights, and each asks"
        )
    if shutil.which("bwrap") is None:
        return (
            "bubblewrap is not installed (Debian/Ubuntu: apt install bubblewrap; Fedora: "
            "dnf install bubblewrap; Arch: pacman -S bubblewrap)"
        )
    return None


# The probe: what a command sees inside, printed as JSON; what it wrote is judged outside.
_PROBE = """
import json, os, socket, sys
ws, outside, secret, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for path in (os.path.join(ws, "inside"), outside):
    try:
        open(path, "w").write("written in the sandbox")
    except OSError:
        pass
seen = {"home_hidden": not secret or not os.path.lexists(secret)}
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close(); seen["network"] = True
except OSError:
    seen["network"] = False
print(json.dumps(seen))
"""


def _probe(sandbox: Sandbox) -> str | None:
    home = Path.home()
    with tempfile.TemporaryDirectory(prefix="tether-probe-", dir=_real_dir()) as parent:
        workspace, outside = Path(parent, "ws"), Path(parent, "outside")
        workspace.mkdir()
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            words = (sys.executable, "-c", _PROBE, str(workspace), str(outside))
            secret = _home_entry(home)
            script = " ".join(_quote(w) for w in (*words, secret, str(port)))
            try:
                done = subprocess.run(
                    sandbox.argv(script, workspace, Grant()),
                    capture_output=True,
                    timeout=PROBE_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"bubblewrap could not run its probe: {exc}"
        wrote_inside, wrote_outside = (workspace / "inside").exists(), outside.exists()
    if done.returncode != 0:
        return diagnose(done.stderr.decode(errors="replace"))
    try:
        seen = json.loads(done.stdout.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"the sandbox probe said nothing readable: {done.stdout[:200]!r}"
    broken = [
        why
        for why, fails in (
            ("a command could not write inside the workspace", not wrote_inside),
            ("a command could write outside the workspace", wrote_outside),
            ("a command could see your home directory", seen.get("home_hidden") is not True),
            ("a command could reach the network", seen.get("network") is not False),
        )
        if fails
    ]
    return "the sandbox does not hold: " + "; ".join(broken) if broken else None


def _real_dir() -> str | None:
    """A directory outside the sandbox's private /tmp, so a write there would show: the
    state of the user, else the system's temporary directory (then /tmp is its own test)."""
    for candidate in (Path.home() / ".cache", Path("/var/tmp")):
        if candidate.is_dir() and os.access(candidate, os.W_OK):
            return str(candidate)
    return None


def _home_entry(home: Path) -> str:
    """An entry of the real home that no toolchain shows: it must not be there inside."""
    shown = {p.relative_to(home).parts[0] for p in toolchains(home) if p.is_relative_to(home)}
    try:
        names = sorted(n for n in os.listdir(home) if n not in shown)
    except OSError:
        return ""
    return str(home / names[0]) if names else ""


def diagnose(stderr: str) -> str:
    """bubblewrap's failure, said plainly: each known way it fails, and what to do."""
    said = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
    if "setting up uid map" in stderr or "RTM_NEWADDR" in stderr:
        return (
            "user namespaces are restricted on this system (Ubuntu 23.10 and newer restrict "
            "them with AppArmor: allow bwrap with an AppArmor profile, or set "
            f"kernel.apparmor_restrict_unprivileged_userns=0); bubblewrap said: {said}"
        )
    if "No permissions to create new namespace" in stderr or "Operation not permitted" in stderr:
        return (
            "this system does not allow new namespaces (a container without nested "
            "namespaces, or kernel.unprivileged_userns_clone=0); run tether outside the "
            f"container or allow user namespaces; bubblewrap said: {said}"
        )
    return f"bubblewrap failed: {said}"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"

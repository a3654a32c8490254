"""tether's own file watcher over a workspace, for where no editor watches the files for it
(an LSP client that refuses or lacks the dynamic registration of
``workspace/didChangeWatchedFiles``; the ACP front): ``watchfiles``, over Rust's
``notify`` (inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows).

The watch is in place before ``start`` returns True, so a walk begun after it misses no
change. Its own thread waits for changes (no worker of the event loop is held) and
leaves out, before anything reaches the loop, what the index never holds: ``.git/``
(but ``.git/info/exclude``, which changes what belongs) and everything in a directory
the walk does not enter (an ignore file's rules, cached per directory until an ignore
file changes). What is left is told to the index (``WorkspaceIndex.changed``), which
judges each path again. When the watch cannot start (the inotify watch limit, a
filesystem that refuses) or dies, the index stops answering (``unfollow``: searches
run ripgrep) and the log says why, once. One death is not final: watchfiles cannot
name a path that is not UTF-8 (a file ``caf\xe9.txt`` read or changed), and its watch
then raises for good; so the watch is set up again (after ``RESTART_S``, or ten times
its last setup if longer), each search meanwhile catching up with the disk before the
index answers it, and the first after the new watch too (``pause``, ``unsure``,
``follow``).
Nothing here writes to stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

# The watch itself rather than ``awatch``, which sets it up on the event loop's thread (a
# watch per directory: seconds on a big tree) and says nothing once it is in place.
from watchfiles._rust_notify import RustNotify

from tether.index.workspace import WorkspaceIndex
from tether.tools.ignore import Ignores, ignores_above

log = logging.getLogger(__name__)
DEBOUNCE_MS = 400  # a stream of changes is told at least this often
STEP_MS = 30  # changes are told once this long passes without another
TIMEOUT_MS = 1000  # the thread looks up this often even when nothing happens
# A watch that died of a name it cannot decode starts again after this, or after ten
# times what its last setup took (a watch per directory: seconds on a big tree), so that
# setting it up again takes a tenth of a core at most however often it dies.
RESTART_S = 1.0
_UNDECODABLE = "Unable to decode path"  # watchfiles's words for such a name


class Relevant:
    """Whether a changed path may be a file the index holds: cheap, and only ever too
    generous (the index judges each path it is told)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._inside: dict[Path, Ignores | None] = {}  # None: the walk does not enter it

    def __call__(self, path: Path) -> bool:
        if path == self.root or not path.is_relative_to(self.root):
            return False
        parts = path.relative_to(self.root).parts
        if ".git" in parts:
            return parts == (".git", "info", "exclude")
        rules = self._rules(path.parent)
        if rules is None:
            return False  # (an ignore file in an ignored directory too: npm writes many)
        if path.name == ".gitignore":
            self._inside.clear()  # which directories are entered may have changed
            return True
        # A path gone may have been a file or a directory ("build/" ignores only these).
        kinds = (os.path.isdir(path),) if os.path.lexists(path) else (False, True)
        return not all(rules.ignored(path, is_dir) for is_dir in kinds)

    def forget(self) -> None:
        """``.git/info/exclude`` changed: every directory is judged again."""
        self._inside.clear()

    def _rules(self, directory: Path) -> Ignores | None:
        """The rules in force inside ``directory``; None when the walk does not enter it."""
        if directory in self._inside:
            return self._inside[directory]
        if directory == self.root:
            rules: Ignores | None = ignores_above(self.root, self.root).descend(self.root)
        else:
            parent = self._rules(directory.parent)
            entered = parent is not None and not parent.ignored(directory, is_dir=True)
            rules = parent.descend(directory) if entered and parent is not None else None
            if rules is not None and directory.is_symlink():
                rules = None  # the walk lists a link but never follows it
        self._inside[directory] = rules
        return rules


class Watcher:
    """One workspace's watch, told to its index until ``stop``."""

    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index
        self.relevant = Relevant(index.root)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> bool:
        """Watch the workspace; True once every change from now on will be told."""
        self._loop = asyncio.get_running_loop()
        started: asyncio.Future[BaseException | None] = self._loop.create_future()
        self._thread = threading.Thread(
            target=self._serve, args=(started,), name="tether-watch", daemon=True
        )
        self._thread.start()
        failed = await asyncio.shield(started)
        if failed is not None:
            self._lost(f"tether cannot watch the files of {self.index.root}", failed)
            return False
        return True

    async def stop(self) -> None:
        """End the watch (its thread looks at the stop event every few milliseconds)."""
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)

    def _serve(self, started: asyncio.Future[BaseException | None]) -> None:
        """The watch's thread: set it up (a watch per directory: it takes a while on a big
        tree), then wait for changes until stopped."""
        try:
            began = time.monotonic()
            notify = self._notify()
        except Exception as exc:  # the watch limit, a refusing filesystem, a root gone
            self._call(_settle, started, exc)
            return
        self._call(_settle, started, None)
        while True:
            setup = time.monotonic() - began
            try:
                self._watch(notify)
                return  # stopped
            except Exception as exc:
                if self._stop.is_set():
                    return
                if _UNDECODABLE not in str(exc):
                    self._call(self._lost, f"tether's watch of {self.index.root} stopped", exc)
                    return
            # Changes go unseen until the new watch is in place: each answer meanwhile,
            # and the first after it, catches up with the disk.
            self._call(self.index.pause)
            if self._stop.wait(max(RESTART_S, 10 * setup)):
                return
            try:
                began = time.monotonic()
                notify = self._notify()
            except Exception as exc:
                self._call(self._lost, f"tether's watch of {self.index.root} stopped", exc)
                return
            self._call(self.index.unsure)
            self._call(self.index.follow)

    def _notify(self) -> RustNotify:
        if not self.index.root.is_dir():
            raise FileNotFoundError(f"{self.index.root} is no directory")
        # No debug output (stderr). Errors of the setup are not passed over: asked to pass
        # over unreadable directories, watchfiles passes over every error of the setup,
        # the watch limit too. So an unreadable directory fails the watch.
        return RustNotify([str(self.index.root)], False, False, 300, True, False)

    def _watch(self, notify: RustNotify) -> None:
        """Tell the index what changes, until stopped (or the watch raises)."""
        with notify:
            while not self._stop.is_set():
                raw = notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, self._stop)
                if isinstance(raw, set) and (paths := self._kept(p for _, p in raw)):
                    self._call(self.index.changed, paths)

    def _kept(self, raw: Iterable[str]) -> list[Path]:
        paths = [Path(path) for path in raw]
        if any(path.name == "exclude" and ".git" in path.parts for path in paths):
            self.relevant.forget()
        return [path for path in paths if self.relevant(path)]

    def _call(self, function: Callable[..., None], *args: object) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
            self._loop.call_soon_threadsafe(function, *args)

    def _lost(self, what: str, exc: BaseException) -> None:
        log.warning("%s (%s): searches run ripgrep over everything", what, exc)
        self.index.unfollow()


def _settle(future: asyncio.Future[BaseException | None], value: BaseException | None) -> None:
    if not future.done():
        future.set_result(value)

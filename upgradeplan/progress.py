"""Progress of long reads on stderr, only when stderr is a terminal.

Readers call :func:`begin` and advance the task it gives; what is shown depends on the
reporter the command line installed with :func:`install` (by default nothing, so library
callers and tests see no output). On a terminal one line is rewritten in place and erased
at the end; piped, nothing is written but notes (:func:`note`), so ``-o json|yaml|sarif``
streams and captured stderr stay clean. With ``-v`` each finished part is also said on its
own line (terminal or not). Standard library only; safe to call from the readers' threads.
"""

from __future__ import annotations

import threading
import time
from typing import IO, Any


class Task:
    """One long read of ``total`` parts (contexts, installations, files)."""

    def __init__(self, reporter: Reporter | None, what: str, total: int) -> None:
        self.reporter = reporter
        self.what = what
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.last = ""

    def advance(self, part: str = "") -> None:
        """One part is read (``part`` names it)."""
        if self.reporter is not None:
            self.reporter.advance(self, part)

    def end(self) -> None:
        if self.reporter is not None:
            self.reporter.end(self)

    def __enter__(self) -> Task:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class Reporter:
    """Writes tasks to ``stream``: a line kept up to date on a terminal, -v lines always."""

    def __init__(self, stream: IO[str], *, verbose: int = 0, tty: bool | None = None) -> None:
        self.stream = stream
        self.tty = _is_tty(stream) if tty is None else tty
        self.verbose = verbose
        self.lock = threading.Lock()

    def _line(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self.stream.flush()

    def start(self, task: Task) -> None:
        with self.lock:
            self._line(f"upgradeplan: {task.what}: 0/{task.total}")

    def advance(self, task: Task, part: str) -> None:
        with self.lock:
            task.done += 1
            task.last = part
            elapsed = time.monotonic() - task.started
            if self.verbose:
                self._line("")
                said = part or str(task.done)
                self.stream.write(f"upgradeplan: {task.what}: {said} ({elapsed:.1f} s)\n")
            shown = f" ({part})" if part else ""
            self._line(f"upgradeplan: {task.what}: {task.done}/{task.total}{shown}")

    def note(self, text: str) -> None:
        with self.lock:
            self._line("")
            self.stream.write(f"upgradeplan: note: {text}\n")
            self.stream.flush()

    def end(self, task: Task) -> None:
        with self.lock:
            if self.tty:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


_current: Reporter | None = None


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def install(reporter: Reporter | None) -> None:
    """Show progress through ``reporter`` from now on (None: show nothing)."""
    global _current
    _current = reporter


def note(text: str) -> None:
    """Say ``text`` on stderr (terminal or not) when the command line installed a reporter:
    something a reader tolerated and the user should know (a skipped prompt line)."""
    if _current is not None:
        _current.note(text)


def set_verbose(level: int) -> None:
    """-v given after the command: the installed reporter says finished parts too."""
    if _current is not None:
        _current.verbose = level


def active() -> bool:
    """Whether anything would be shown (a reporter on a terminal, or -v)."""
    return _current is not None and (_current.tty or bool(_current.verbose))


def begin(what: str, total: int) -> Task:
    """A task of ``total`` parts; a no-op unless :func:`active`."""
    reporter = _current if active() else None
    task = Task(reporter, what, total)
    if reporter is not None:
        reporter.start(task)
    return task

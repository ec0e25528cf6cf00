"""The console scripts and ``python -m upgradeplan``: ``--version`` and ``--help`` without click.

Importing click alone costs about four interpreter starts, so the two answers a user waits on
most are given before it is imported: ``--version`` is one line, and the top-level ``--help``
is the text click rendered the first time, kept in the user cache directory under a key of
the installed code, the program name and the terminal width (:mod:`upgradeplan.usercache`).
``check`` with plain options is parsed and run without click (:mod:`upgradeplan.commands.fast`).
Everything else, and every miss, goes to :func:`upgradeplan.cli.run`; the process then ends
without the interpreter's teardown (:func:`end`).
"""

from __future__ import annotations

import os
import sys

HELP_FLAGS = (["--help"], ["-h"])


def main() -> None:
    """Entry point of ``upgradeplan`` and ``kubectl-upgradeplan``."""
    args = sys.argv[1:]
    if args == ["--version"]:
        from upgradeplan import __version__

        _print(f"upgradeplan {__version__}\n")
    elif args in HELP_FLAGS:
        _print(help_text(prog_name()))
    import gc

    # The imports and the knowledge allocate some 10^5 objects that live until the exit; with
    # the default threshold (700) the collector walks them again and again (about a tenth of
    # an offline check's CPU). Cycles are still collected, every 50,000 allocations.
    gc.set_threshold(50_000, 20, 20)
    from upgradeplan import collector, compiled, usercache

    collector.freeze_on_resume(True)  # what a read or load built is kept until the exit anyway

    usercache.defer_writes()  # a cold knowledge load's cache entry: written after the answer
    compiled.keep_between_runs()  # the record classes' __init__ compiled in an earlier run
    from upgradeplan.commands import fast

    code = fast.run(args)  # check without click, when its options are plain
    if code is None:
        from upgradeplan.cli import run

        code = run(args)
    end(code)


def end(code: int) -> None:
    """Exit with ``code`` without the interpreter's teardown, once nothing needs it.

    Tearing down the modules and objects of a finished command costs more than some commands
    take. Before leaving with :func:`os._exit`: stdout and stderr are flushed, the cache
    writes deferred until the answer was out are done (:func:`usercache.defer_writes`) and
    the ``atexit`` functions run. When a flush fails (a closed pipe) or a thread other than
    the main one still runs, the process ends as it always did (``sys.exit``), so what is
    printed and the exit code stay those of a normal exit.
    """
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        flushed = True
    except (OSError, ValueError):
        flushed = False
    from upgradeplan.usercache import run_later

    run_later()  # the cache entries deferred until the answer was out
    threading = sys.modules.get("threading")
    if not flushed or (
        threading is not None
        and any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread())
    ):
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    os._exit(code)


def prog_name() -> str:
    """The name the usage line shows: ``kubectl upgradeplan`` when run as a kubectl plugin."""
    invoked_as = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "kubectl upgradeplan" if invoked_as.startswith("kubectl-") else "upgradeplan"


def columns() -> int:
    """The terminal width as click reads it (shutil.get_terminal_size, without shutil)."""
    try:
        value = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        value = 0
    if value <= 0:
        try:
            value = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            value = 0
    return value or 80


def help_text(prog: str) -> str:
    """The top-level help as click renders it, from the cache when it was rendered before."""
    from upgradeplan import usercache

    where = usercache.cache_dir()
    path = None
    if where is not None:
        click = usercache.module_stamp("click")
        key = f"{prog}\0{columns()}\0{click}\0{usercache.code_stamp()}".encode()
        h = usercache.hasher(len(key))
        h.update(key)
        path = os.path.join(where, f"help-{h.hexdigest()}.txt")
        data = usercache.read_private(path)
        if data is not None:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass  # not ours: rendered again and rewritten below
    text = render_help(prog)
    if path is not None:
        usercache.write_private(path, text.encode("utf-8"))
    return text


def render_help(prog: str) -> str:
    """What ``upgradeplan --help`` prints, rendered by click."""
    from upgradeplan.cli import cli

    with cli.make_context(prog, [], resilient_parsing=True) as ctx:
        return ctx.get_help() + "\n"


def _print(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()

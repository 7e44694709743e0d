"""``python -m c4lab`` and the ``c4lab`` command (its console script): the
command's modules loaded where Ctrl-C is the command's one line and status
130, then :func:`c4lab.cli.run`.

Loading ``c4lab.cli`` (click, the option types) takes a few tenths of a
second; Ctrl-C in that time was Python's own traceback of whatever import
it met, before the command group that says "interrupted" existed.
"""

from __future__ import annotations

import signal  # built in: no time
import sys

from c4lab.ctrl_c import ctrl_c_kept_for_later, interrupted_line  # light: signal, sys, threading

#: The status of a command Ctrl-C ended, as the shell gives it: 128 + SIGINT.
INTERRUPTED = 130

#: The commands that Ctrl-C stops even where SIGINT came ignored (a
#: background job of a script): each puts its own handler in place for its
#: run (``c4lab.ctrl_c``).  From the process's start, a press is kept for
#: the first of them to act on (``ctrl_c_kept_for_later``), so that a press
#: while the command loads (a second or so: click, numpy, numba) is
#: neither lost nor a traceback of numba's imports.
STOPPABLE = frozenset({"arena", "book", "move", "solve", "train"})


def main() -> None:
    """Run the ``c4lab`` command; Ctrl-C while it loads is "interrupted",
    status 130, as Ctrl-C in any command."""
    try:
        if len(sys.argv) > 1 and sys.argv[1] in STOPPABLE:
            ctrl_c_kept_for_later()
        from c4lab.cli import run  # lazy: so that Ctrl-C while it loads is caught here
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # more presses on the way out change nothing
        print(interrupted_line(), file=sys.stderr)
        sys.exit(INTERRUPTED)
    run()


if __name__ == "__main__":  # pragma: no cover
    main()

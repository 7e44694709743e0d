"""``python -m c4lab`` and the ``c4lab`` command (its console script): the
command's modules loaded where Ctrl-C is the command's one line and status
130, then :func:`c4lab.cli.run`.

Loading ``c4lab.cli`` (click, the option types) takes a few tenths of a
second; Ctrl-C in that time was Python's own traceback of whatever import
it met, before the command group that says "interrupted" existed.
"""

from __future__ import annotations

import sys

#: The status of a command Ctrl-C ended, as the shell gives it: 128 + SIGINT.
INTERRUPTED = 130


def main() -> None:
    """Run the ``c4lab`` command; Ctrl-C while it loads is "interrupted",
    status 130, as Ctrl-C in any command."""
    try:
        from c4lab.cli import run  # lazy: so that Ctrl-C while it loads is caught here
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    run()


if __name__ == "__main__":  # pragma: no cover
    main()

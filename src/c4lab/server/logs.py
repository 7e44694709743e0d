"""The log of a server that runs for long (``c4lab serve``, ``c4lab play``):
one line an event, each with its date and time, on standard error.

An operator reads it after the fact ("when did the rooms stop being
saved?", "who was refused?"), so every line says when, how grave, and
which part of the server wrote it::

    2026-11-30 12:04:31 INFO    c4lab.server.rooms: room K7QF: created (online, 7x6)
    2026-11-30 12:05:02 INFO    c4lab.server.guard: refused 429 POST /api/rooms from 203.0.113.9: too many new rooms ...

``--log-level`` picks what is written: ``warning`` (what went wrong and
was survived: a database write that failed, a socket closed for reading
nothing), ``info`` (``c4lab serve``'s default: also each room made and
each game ended, and each request the server's door refused: rate
limits, room caps, a foreign page, a body too large; a socket's text
message that is not UTF-8, which uvicorn wrote as an error with a
traceback: ``BadTextFrames``), ``debug``.
``--access-log`` adds uvicorn's line for every HTTP request, and the
lines uvicorn writes about each WebSocket (the handshake accepted or
refused, the connection opened and closed), left out otherwise
(``ConnectionLines``).  The
configuration is uvicorn's own (``uvicorn.Config(log_config=...)``, the
standard library's ``logging.config.dictConfig``), so its lines and
c4lab's share one format.  Tests' servers in a thread keep uvicorn's
default configuration (this one is for a process of its own).
"""

from __future__ import annotations

import logging
from typing import Any

#: The levels ``--log-level`` accepts, least to most verbose.
LEVELS = ("error", "warning", "info", "debug")
FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
ACCESS_FORMAT = '%(asctime)s ACCESS  %(client_addr)s "%(request_line)s" %(status_code)s'
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"

log = logging.getLogger("c4lab.server.guard")


class ConnectionLines(logging.Filter):
    """Leaves out uvicorn's (and ``websockets``') info lines about one
    WebSocket: ``'... - "WebSocket /ws/CODE" [accepted]'``, ``connection
    open``, ``connection closed``, ``connection rejected ...``.  They come
    through ``uvicorn.error``, the logger of the server's start and stop,
    and are an access log of the sockets: one or two lines a connection."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return not (message.startswith(('%s - "WebSocket ', "connection rejected"))
                    or message in ("connection open", "connection closed"))


class BadTextFrames(logging.Filter):
    """Makes uvicorn's record of a WebSocket text frame that is not UTF-8
    (an ``ERROR`` with the ``UnicodeDecodeError``'s traceback, as if the
    server had failed) one ``INFO`` line, as a refused request's: the
    client sent bad input, the socket is closed with 1007, nothing else
    happened."""

    MESSAGE = "Invalid UTF-8 sequence received from client."

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self.MESSAGE:
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.INFO):
            return False
        why = record.exc_info[1] if record.exc_info else None
        record.msg, record.args = "a socket sent a text message that is not UTF-8 (%s): closed with 1007", (why,)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def config(level: str = "warning", access: bool = False) -> dict[str, Any]:
    """The ``dictConfig`` of a server's log: c4lab's and uvicorn's lines at
    ``level`` (one of ``LEVELS``) and above, with the time; uvicorn's access
    log (one line a request) and the lines of each WebSocket only with
    ``access``."""
    if level not in LEVELS:
        raise ValueError(f"a log level is one of {', '.join(LEVELS)}, not {level!r}")
    upper = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {"()": "logging.Formatter", "fmt": FORMAT, "datefmt": DATE_FORMAT},
            "access": {"()": "uvicorn.logging.AccessFormatter", "fmt": ACCESS_FORMAT, "datefmt": DATE_FORMAT,
                       "use_colors": False},
        },
        "filters": {"connections": {"()": ConnectionLines}, "bad-text": {"()": BadTextFrames}},
        "handlers": {
            "default": {"formatter": "default", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
            "access": {"formatter": "access", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": upper, "propagate": False},
            "uvicorn.error": {"level": upper, "filters": ["bad-text"] if access else ["bad-text", "connections"]},
            "uvicorn.access": {"handlers": ["access"] if access else [], "level": "INFO", "propagate": False},
            # propagates: a test's log capture (on the root logger) still sees c4lab's lines
            "c4lab": {"handlers": ["default"], "level": upper, "propagate": True},
        },
    }


def one_line(text: str) -> str:
    """``text`` as part of one line of the log: a character that does not
    print (a newline, a NUL, ``%0A`` in an address once decoded) is written
    as its escape, ``\\n``, so that no visitor can start a line of their own
    that looks like the server's ("room ... created")."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def refused(client: str, method: str, path: str, status: int, detail: str) -> None:
    """One line (info) for a request the server refused to serve as asked:
    who, what, and the answer it was given (the path is the visitor's:
    ``one_line``)."""
    log.info("refused %d %s %s from %s: %s", status, one_line(method), one_line(path), client, one_line(detail))

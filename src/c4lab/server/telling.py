"""Telling a room's connections: each message sent to all at once, with
no slow reader holding up the others, and a wait for an agent or a hint
that says so while numba compiles (the first start after an install).
``rooms.py`` and ``hints.py`` send through it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from c4lab.server import warmup
from c4lab.server.room import Connection

log = logging.getLogger(__name__)

#: Seconds a message may wait for its connection to take it.  A send waits
#: only when the client has stopped reading (its buffers full: megabytes
#: behind); after this it is dropped (``drop``, if the connection has one),
#: so that a broadcast -- and the player whose move it tells -- never waits
#: for it longer.
SEND_TIMEOUT = 10.0


async def tell(conn: Connection, text: str) -> None:
    """Send the JSON ``text`` to ``conn`` if it is still open (``tell_all``)."""
    await tell_all([(conn, text)])


async def tell_all(messages: list[tuple[Connection, str]]) -> None:
    """Send each connection its JSON text, all at once: one that takes
    nothing for ``SEND_TIMEOUT`` seconds (a client that never reads) is
    dropped (its ``drop``, if it has one), and holds up neither the others
    nor the sender for longer."""
    sending = {asyncio.ensure_future(_send(conn, text)): conn for conn, text in messages}
    if not sending:
        return
    _, stuck = await asyncio.wait(sending, timeout=SEND_TIMEOUT)
    for task in stuck:
        task.cancel()
        drop = getattr(sending[task], "drop", None)
        if drop is not None:
            drop()


async def _send(conn: Connection, text: str) -> None:
    try:
        await conn.send_text(text)
    except Exception:  # a page closed meanwhile (its handler cleans up): its library's error
        log.debug("a message found its connection closed", exc_info=True)


#: Seconds into an agent's move when, if numba is compiling, the room says
#: it is preparing the engine; then how often it says how long so far.
PREPARING_FIRST = 0.3
PREPARING_EVERY = 1.0


async def while_compiling(
    work: asyncio.Future[Any], tell: Callable[[float], Awaitable[None]], skip: Callable[[], bool] = lambda: False
) -> Any:
    """``work``'s result.  Meanwhile, from a compile of numba's seen on (the
    first start after an install), ``tell`` gets the seconds waited so far,
    ``PREPARING_FIRST`` seconds in and then every ``PREPARING_EVERY``
    (unless ``skip()`` at that moment)."""
    started = time.monotonic()
    compiles = warmup.COMPILING.started
    wait, told = PREPARING_FIRST, False
    while True:
        done, _ = await asyncio.wait({work}, timeout=wait)
        if done:
            return work.result()
        wait = PREPARING_EVERY
        if skip():
            continue
        if told or warmup.COMPILING.active or warmup.COMPILING.started != compiles:
            told = True
            await tell(warmup.waited(started))

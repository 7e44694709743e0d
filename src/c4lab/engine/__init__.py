"""The engine protocol: a line protocol over standard input and output that
lets any program, in any language, be an agent in the arena, and lets other
programs drive our agents (docs/engine-protocol.md).  UCI is the model.

- ``c4lab.engine.protocol``: the messages, parsed from and formatted to lines
  (it knows move tokens only: no agents, no compiled engine);
- ``c4lab.engine.serve``: ``serve(spec, stdin, stdout)`` runs one of our
  agents behind the protocol (the ``c4lab engine --agent SPEC`` command);
- ``c4lab.engine.client``: ``EngineAgent``, an external engine program as an
  agent, registered as the spec ``engine:cmd=...`` by importing that module
  (only local commands do: a server must never start programs).

The names below are loaded on first use (``__getattr__``), so that importing
``c4lab.engine.protocol`` loads the protocol alone.  (``serve`` is imported
from its module: the package attribute ``serve`` is that module.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from c4lab.lazy import lazy_dir, lazy_names

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.engine.client import EngineAgent, EngineError, EngineIllegalMove, EngineTimeout
    from c4lab.engine.protocol import ProtocolError, parse_command, parse_reply

#: Each public name and the module that defines it.
_HOMES = {
    "EngineAgent": "c4lab.engine.client",
    "EngineError": "c4lab.engine.client",
    "EngineIllegalMove": "c4lab.engine.client",
    "EngineTimeout": "c4lab.engine.client",
    "ProtocolError": "c4lab.engine.protocol",
    "parse_command": "c4lab.engine.protocol",
    "parse_reply": "c4lab.engine.protocol",
}

__all__ = [
    "EngineAgent",
    "EngineError",
    "EngineIllegalMove",
    "EngineTimeout",
    "ProtocolError",
    "parse_command",
    "parse_reply",
]


__getattr__ = lazy_names(__name__, _HOMES)
__dir__ = lazy_dir(__name__, _HOMES)

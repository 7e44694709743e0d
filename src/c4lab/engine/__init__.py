"""The engine protocol: a line protocol over standard input and output that
lets any program, in any language, be an agent in the arena, and lets other
programs drive our agents (docs/engine-protocol.md).  UCI is the model.

- ``c4lab.engine.protocol``: the messages, parsed from and formatted to lines;
- ``c4lab.engine.serve``: ``serve(spec, stdin, stdout)`` runs one of our
  agents behind the protocol (the ``c4lab engine --agent SPEC`` command);
- ``c4lab.engine.client``: ``EngineAgent``, an external engine program as an
  agent, registered as the spec ``engine:cmd=...`` by importing this package.
"""

from c4lab.engine.client import EngineAgent, EngineError
from c4lab.engine.protocol import ProtocolError, parse_command, parse_reply
from c4lab.engine.serve import serve

__all__ = ["EngineAgent", "EngineError", "ProtocolError", "parse_command", "parse_reply", "serve"]

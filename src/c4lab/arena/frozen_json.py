"""JSON values that cannot be changed in place, and back.

``ArenaConfig.extra`` is free-form JSON saved in a run's results file; it
is out of the config's hash, so a caller who changed it in place
(``config.extra["note"] = ...``) changed what the config compares equal
to, and what a later run would write, behind its back.  ``freeze`` gives
a read-only copy (objects as ``types.MappingProxyType``, arrays as
tuples); ``thaw`` gives plain ``dict`` and ``list`` again, for
``json.dumps`` and for whoever wants a copy to edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["freeze", "thaw"]


def freeze(value: Any) -> Any:
    """``value`` (JSON: dicts, lists, text, numbers, booleans, None) with
    every dict a read-only mapping and every list a tuple."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """``value`` with every mapping a new ``dict`` and every list or tuple
    a new ``list``: what ``json.dumps`` writes and ``json.loads`` reads back."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value

"""The error of a learning setting out of its range, shared by the
learners' settings (``ntuple.Options``, ``qlearning.TrainConfig``): it
names the setting's field, so that a caller of the Python API reads which
one (``Options.alpha: ...``), and keeps the rest of the message apart for
the commands, which name their own option instead (``Invalid value for
'--alpha': ...``).
"""

from __future__ import annotations


class OptionOutOfRange(ValueError):
    """A learning setting out of its range: ``field`` names the setting (a
    field of ``owner``, the settings' class) and the message begins with
    both (``Options.average: ...``); ``message`` is the rest."""

    def __init__(self, field: str, message: str, owner: str = "Options") -> None:
        super().__init__(f"{owner}.{field}: {message}")
        self.field = field
        self.message = message
        self.owner = owner

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.message, self.owner))  # the default would pass the message alone


class OptionWrongType(OptionOutOfRange, TypeError):
    """A learning setting of the wrong type (a string, None, a bool for a
    number): a ``TypeError`` as Python's own, and an ``OptionOutOfRange``
    naming the field, so one ``except`` catches every bad setting."""

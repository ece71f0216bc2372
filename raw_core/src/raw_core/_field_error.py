"""``FieldValueError``: the error a record's own check raises, naming its field.

Kept apart from :mod:`raw_core._convert` so that records can raise it without importing
cattrs (the session store's records are read on fast paths such as ``raw sessions list``).
"""

from __future__ import annotations

__all__ = ["FieldValueError"]


class FieldValueError(ValueError):
    """Raised by an attrs validator: names the attribute so the path reaches it."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message

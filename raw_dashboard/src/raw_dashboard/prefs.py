"""Browser preferences: the theme and the panel layout, in a file of raw's state folder.

They are the person's view of the dashboard, not configuration: they never go into a
config file and nothing but the dashboard reads them. The file is ``dashboard.json`` in
raw's state directory (``platformdirs.user_state_dir("raw")``), written whole through a
temporary file and a rename, so a crash leaves the old one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["DEFAULTS", "Preferences", "PreferencesInvalid", "default_path"]

DEFAULTS: dict[str, str] = {"theme": "auto", "panels": "right"}
_CHOICES: dict[str, tuple[str, ...]] = {
    "theme": ("auto", "light", "dark"),
    "panels": ("right", "left", "hidden"),
}


class PreferencesInvalid(ValueError):
    """A preference that is not one of its choices; ``field`` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def default_path() -> Path:
    """``dashboard.json`` in raw's state directory."""
    import platformdirs

    return Path(platformdirs.user_state_dir("raw")) / "dashboard.json"


class Preferences:
    """The preferences file at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, str]:
        """The preferences; the defaults for what the file lacks, or for a file that is
        missing or unreadable (it is only a view: never a reason to fail)."""
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        found = dict(DEFAULTS)
        if isinstance(stored, dict):
            for key, choices in _CHOICES.items():
                if stored.get(key) in choices:
                    found[key] = stored[key]
        return found

    def update(self, changes: Any) -> dict[str, str]:
        """Check ``changes`` (an object of known keys, each one of its choices), merge
        them and write the file; the new preferences. Raises :class:`PreferencesInvalid`
        and writes nothing for a bad change."""
        if not isinstance(changes, dict):
            raise PreferencesInvalid("expected an object of preferences", "$")
        for key, value in changes.items():
            choices = _CHOICES.get(key)
            if choices is None:
                known = ", ".join(_CHOICES)
                raise PreferencesInvalid(f"unknown preference {key!r}; known: {known}", f"$.{key}")
            if value not in choices:
                raise PreferencesInvalid(f"{key} must be one of {', '.join(choices)}", f"$.{key}")
        merged = {**self.read(), **changes}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".dashboard-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(merged, file, indent=2)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return merged

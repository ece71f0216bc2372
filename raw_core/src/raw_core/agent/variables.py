"""Runtime variables: values read when needed, kept in memory for one runtime only.

A variable is defined in the config (``vars``: a description and a source) and selected by
an agent (``vars.use``). Its value is read the first time something asks for it — the
``read_var`` tool, or a model whose credential names it — and cached in this object, never
written anywhere: the session store keeps a placeholder where a ``read_var`` result would
be (see :mod:`raw_core.runtime.loop`), so the value reaches the model only inside requests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from raw_core.config import VarDefinition
from raw_core.errors import VarNotSelected, VarUnavailable

__all__ = ["VarService"]

MAX_VALUE_BYTES = 1024 * 1024


def _strip_newline(text: str) -> str:
    """Drop the one line ending a file or a program's output ends with (``\\n`` or
    ``\\r\\n``): it is never part of a token."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


class VarService:
    """The variables an agent selected, and the values read so far (thread-safe)."""

    def __init__(
        self,
        definitions: Mapping[str, VarDefinition],
        selected: Sequence[str],
        *,
        base_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._definitions = dict(definitions)
        self._selected = tuple(selected)
        self._base_dir = base_dir
        self._environ = environ if environ is not None else os.environ
        self._values: dict[str, str] = {}
        self._lock = threading.Lock()

    def listing(self) -> list[tuple[str, str]]:
        """``(name, description)`` of each selected variable, in ``vars.use`` order. Never a
        value."""
        return [(name, self._definitions[name].description) for name in self._selected]

    @property
    def selected(self) -> tuple[str, ...]:
        """The selected names, in order."""
        return self._selected

    def read(self, name: str) -> str:
        """The value of a selected variable (``var_not_selected`` otherwise)."""
        if name not in self._selected:
            listed = ", ".join(self._selected) or "none"
            raise VarNotSelected(
                f"the agent does not select a variable named {name!r} (selected: {listed})",
                var=name,
            )
        return self.read_defined(name)

    def read_defined(self, name: str) -> str:
        """The value of any variable the config defines (for a model's credential)."""
        with self._lock:
            cached = self._values.get(name)
        if cached is not None:
            return cached
        definition = self._definitions.get(name)
        if definition is None:
            raise VarNotSelected(f"no variable named {name!r} is defined", var=name)
        value = self._fetch(name, definition)
        with self._lock:
            self._values.setdefault(name, value)
            return self._values[name]

    def _fetch(self, name: str, definition: VarDefinition) -> str:
        source = definition.source
        if source.env is not None:
            value = self._environ.get(source.env)
            if value is None:
                raise VarUnavailable(
                    f"variable {name}: the environment variable {source.env} is not set",
                    var=name,
                )
            return value
        if source.file is not None:
            path = Path(os.path.expanduser(source.file))
            if not path.is_absolute() and self._base_dir is not None:
                path = self._base_dir / path
            try:
                data = path.read_bytes()[: MAX_VALUE_BYTES + 1]
            except OSError as exc:
                raise VarUnavailable(
                    f"variable {name}: cannot read {path}: {exc.strerror}", var=name
                ) from None
            return self._text(name, data, f"the file {path}")
        assert source.command is not None
        return self._run(name, source.command, source.timeout_ms / 1000)

    def _run(self, name: str, argv: Sequence[str], timeout: float) -> str:
        try:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self._base_dir,
            )
        except OSError as exc:
            raise VarUnavailable(
                f"variable {name}: cannot run {argv[0]!r}: {exc.strerror}", var=name
            ) from None
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise VarUnavailable(
                f"variable {name}: {argv[0]!r} did not finish within {timeout:g} s", var=name
            ) from None
        if process.returncode != 0:
            raise VarUnavailable(
                f"variable {name}: {argv[0]!r} exited with status {process.returncode}",
                var=name,
            )
        return self._text(name, output, f"the output of {argv[0]!r}")

    @staticmethod
    def _text(name: str, data: bytes, what: str) -> str:
        if len(data) > MAX_VALUE_BYTES:
            raise VarUnavailable(
                f"variable {name}: {what} is larger than {MAX_VALUE_BYTES} bytes", var=name
            )
        try:
            text = _strip_newline(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise VarUnavailable(f"variable {name}: {what} is not UTF-8 text", var=name) from None
        if not text:
            raise VarUnavailable(f"variable {name}: {what} is empty", var=name)
        return text

"""Runtime variables: values read when needed, kept in memory for one runtime only.

A variable is defined in the config (``vars``: a description and a source) and selected by
an agent (``vars.use``). Its value is read the first time something asks for it — the
``read_var`` tool, or a model whose credential names it — and kept in a :class:`VarCache`,
never written anywhere: the session store keeps a placeholder where a ``read_var`` result
would be (see :mod:`raw_core.runtime.loop`), so the value reaches the model only inside
requests. The runtime (an :class:`raw_core.app.App`) owns one cache and gives it to every
agent it loads, so a value is read once for all its sessions and calls.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from raw_core.config import VarDefinition, VarSource
from raw_core.errors import VarNotSelected, VarUnavailable

__all__ = ["VarCache", "VarService"]

MAX_VALUE_BYTES = 1024 * 1024


def _strip_newline(text: str) -> str:
    """Drop the one line ending a file or a program's output ends with (``\\n`` or
    ``\\r\\n``): it is never part of a token."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def _shown(text: str) -> str:
    """``text`` as a message can quote it: escaped when it is not UTF-8 text (a lone
    surrogate), which no terminal or JSON output could write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ascii(text)
    return text


class VarCache:
    """The values read so far in one runtime, by source (thread-safe). Only memory holds
    them; they go when the runtime does."""

    def __init__(self) -> None:
        self._values: dict[tuple[VarSource, Path | None], str] = {}
        self._lock = threading.Lock()

    def get(self, source: VarSource, base_dir: Path | None) -> str | None:
        """The value read from ``source`` (relative to ``base_dir``), or ``None``."""
        with self._lock:
            return self._values.get((source, base_dir))

    def keep(self, source: VarSource, base_dir: Path | None, value: str) -> str:
        """Remember ``value`` unless a value was kept meanwhile; return the one kept."""
        with self._lock:
            return self._values.setdefault((source, base_dir), value)


class VarService:
    """The variables an agent selected, read through the runtime's :class:`VarCache`
    (``cache``; a service of its own without one) (thread-safe)."""

    def __init__(
        self,
        definitions: Mapping[str, VarDefinition],
        selected: Sequence[str],
        *,
        base_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
        cache: VarCache | None = None,
    ) -> None:
        self._definitions = dict(definitions)
        self._selected = tuple(selected)
        self._base_dir = base_dir
        self._environ = environ if environ is not None else os.environ
        self._cache = cache if cache is not None else VarCache()

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
        definition = self._definitions.get(name)
        if definition is None:
            raise VarNotSelected(f"no variable named {name!r} is defined", var=name)
        cached = self._cache.get(definition.source, self._base_dir)
        if cached is not None:
            return cached
        value = self._fetch(name, definition)
        return self._cache.keep(definition.source, self._base_dir, value)

    def _fetch(self, name: str, definition: VarDefinition) -> str:
        """Read the value; any failure to read it is ``var_unavailable`` (a source the
        config could not have accepted — a NUL in a path, say — included)."""
        source = definition.source
        if source.env is not None:
            try:
                value = self._environ.get(source.env)
            except ValueError:  # a name the environment cannot hold (a lone surrogate)
                value = None
            if value is None:
                raise VarUnavailable(
                    f"variable {name}: the environment variable {_shown(source.env)} is not set",
                    var=name,
                )
            what = f"the environment variable {_shown(source.env)}"
            return self._checked(name, value, what)
        if source.file is not None:
            return self._read_file(name, source.file)
        assert source.command is not None
        return self._run(name, source.command, source.timeout_ms / 1000)

    def _read_file(self, name: str, file: str) -> str:
        path = Path(os.path.expanduser(file))
        if not path.is_absolute() and self._base_dir is not None:
            path = self._base_dir / path
        try:
            with path.open("rb") as stream:
                data = stream.read(MAX_VALUE_BYTES + 1)
        except OSError as exc:
            raise VarUnavailable(
                f"variable {name}: cannot read {_shown(str(path))}: {exc.strerror}", var=name
            ) from None
        except ValueError as exc:  # a path the system cannot take (a NUL, a surrogate)
            raise VarUnavailable(
                f"variable {name}: cannot read {_shown(str(path))}: {exc}", var=name
            ) from None
        return self._text(name, data, f"the file {_shown(str(path))}")

    def _run(self, name: str, argv: Sequence[str], timeout: float) -> str:
        program = _shown(repr(argv[0])) if argv else "''"
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
                f"variable {name}: cannot run {program}: {exc.strerror}", var=name
            ) from None
        except (ValueError, IndexError) as exc:  # no program, a NUL or surrogate in argv
            raise VarUnavailable(
                f"variable {name}: cannot run {_shown(repr(list(argv)))}: {exc or 'no program'}",
                var=name,
            ) from None
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise VarUnavailable(
                f"variable {name}: {program} did not finish within {timeout:g} s", var=name
            ) from None
        if process.returncode != 0:
            raise VarUnavailable(
                f"variable {name}: {program} exited with status {process.returncode}",
                var=name,
            )
        return self._text(name, output, f"the output of {program}")

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
        return VarService._checked(name, text, what)

    @staticmethod
    def _checked(name: str, text: str, what: str) -> str:
        """``text``, unless it is empty (no source gives an empty value: an empty token is
        as good as none) or is not UTF-8 text (an environment value the system could not
        decode)."""
        if not text:
            raise VarUnavailable(f"variable {name}: {what} is empty", var=name)
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise VarUnavailable(f"variable {name}: {what} is not UTF-8 text", var=name) from None
        if size > MAX_VALUE_BYTES:
            raise VarUnavailable(
                f"variable {name}: {what} is larger than {MAX_VALUE_BYTES} bytes", var=name
            )
        return text

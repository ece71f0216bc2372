"""Turn a tool folder into a :class:`LoadedTool`: paths, manifest, schemas, then the module.

The order is the contract: every path is checked (no link may lead outside the tool's
root), then ``tool.json`` is parsed and both schemas are compiled, and only then is the
entry module imported. The rule that needs the module (``effects_schema`` when it exports
``describe_effects``) is checked right after the import, before the tool is handed out.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread
import attrs

from raw_core._convert import json_text
from raw_core.errors import (
    ManifestError,
    ManifestInvalid,
    ToolEntryInvalid,
    ToolImportFailed,
    ToolNotFound,
    ToolPathOutsideRoot,
)
from raw_core.tools._schema import SchemaDefinitionError, SchemaValidator, compile_schema
from raw_core.tools.manifest import ToolManifest, parse_manifest_and_schemas

__all__ = ["MANIFEST_FILE", "LoadedTool", "ToolLoader", "define_tool"]

MANIFEST_FILE: Final = "tool.json"


@attrs.frozen(kw_only=True, eq=False)
class LoadedTool:
    """A tool ready to be selected: its identity, manifest, compiled schemas and functions."""

    identity: str
    folder: Path
    manifest: ToolManifest
    handler: Callable[..., Any]
    validate_args: Callable[[Any], str | None] | None
    describe_effects: Callable[..., Any] | None
    input_validator: SchemaValidator
    effects_validator: SchemaValidator | None
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The model-facing name."""
        return self.manifest.name

    @property
    def description(self) -> str:
        """The model-facing description, as the manifest states it."""
        return self.manifest.description


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@attrs.define
class _CachedModule:
    stamp: tuple[int, int]
    module: ModuleType


T = TypeVar("T")


@attrs.frozen(kw_only=True, eq=False)
class _Checked:
    """A tool folder that passed every rule checked before its entry module is imported."""

    folder: Path
    real_folder: Path
    manifest: ToolManifest
    entry: Path
    input_validator: SchemaValidator
    effects_validator: SchemaValidator | None
    warnings: tuple[str, ...]


class ToolLoader:
    """Loads tool folders; owns a cache of imported entry modules.

    A second load of an unchanged entry file (same real path, size and modification time)
    reuses the module instead of executing it again. Compiled schemas are cached by their
    content in :mod:`raw_core.tools._schema`.
    """

    def __init__(self) -> None:
        self._modules: dict[Path, _CachedModule] = {}
        # Sessions resolve tools in worker threads: one load at a time keeps the module
        # cache whole and imports each entry module once, so one thread is enough.
        self._lock = threading.RLock()
        self._limiter: anyio.CapacityLimiter | None = None

    async def in_thread(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in this loader's one worker thread (for async callers that
        load tools: reading a folder and importing its module must not stall the loop)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)

    def load(
        self, folder: Path, *, identity: str | None = None, root: Path | None = None
    ) -> LoadedTool:
        """Load the tool in ``folder``.

        ``root`` is the directory the folder must stay inside once links are resolved (the
        tools directory it was found in; by default its parent). ``identity`` defaults to
        ``local/<folder name>``. Safe to call from several threads.
        """
        with self._lock:
            try:
                return self._load(folder, identity=identity, root=root)
            except ManifestError as exc:
                _name_the_tool(exc, Path(os.path.abspath(folder)), identity)
                raise

    def check(
        self, folder: Path, *, identity: str | None = None, root: Path | None = None
    ) -> ToolManifest:
        """Check the tool in ``folder`` by every rule that needs no import — paths,
        ``tool.json``, both schemas, the entry file — and return its manifest. Nothing in
        the folder runs (what ``raw pkg install`` checks an exported tool folder with)."""
        try:
            return self._checked(folder, identity=identity, root=root).manifest
        except ManifestError as exc:
            _name_the_tool(exc, Path(os.path.abspath(folder)), identity)
            raise

    def _load(self, folder: Path, *, identity: str | None, root: Path | None) -> LoadedTool:
        checked = self._checked(folder, identity=identity, root=root)
        manifest = checked.manifest
        label = identity or str(folder)
        module = self._import(checked.entry, manifest, label)
        handler, validate_args, describe_effects = _exports(module, manifest, label, checked.entry)
        return LoadedTool(
            identity=identity or f"local/{checked.folder.name}",
            folder=checked.real_folder,
            manifest=manifest,
            handler=handler,
            validate_args=validate_args,
            describe_effects=describe_effects,
            input_validator=checked.input_validator,
            effects_validator=checked.effects_validator,
            warnings=checked.warnings,
        )

    def _checked(self, folder: Path, *, identity: str | None, root: Path | None) -> _Checked:
        folder = Path(os.path.abspath(folder))
        label = identity or str(folder)
        real_folder = self._check_folder(folder, root, label)
        manifest_path = folder / MANIFEST_FILE
        real_manifest = _real(manifest_path)
        if not _inside(real_manifest, real_folder):
            raise ToolPathOutsideRoot(
                f"{MANIFEST_FILE} is a link to {real_manifest}, outside the tool folder",
                tool=label,
                path=str(manifest_path),
            )
        try:
            text = real_manifest.read_bytes()
        except FileNotFoundError:
            raise ManifestInvalid(
                f"the folder has no {MANIFEST_FILE}", field="$", tool=label, path=str(manifest_path)
            ) from None
        except OSError as exc:
            raise ManifestInvalid(
                f"cannot read {MANIFEST_FILE}: {exc.strerror}",
                field="$",
                tool=label,
                path=str(manifest_path),
            ) from None
        found_warnings: list[str] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            manifest, prepared = parse_manifest_and_schemas(text, tool=label)
        found_warnings.extend(str(w.message) for w in caught)
        if manifest.id != folder.name:
            raise ManifestInvalid(
                f"id must equal the folder name {json_text(folder.name)},"
                f" found {json_text(manifest.id)}",
                field="$.id",
                tool=label,
            )
        # The schemas were prepared (2020-12 rewritten, references checked) when the
        # manifest was checked; compiling them is all that is left.
        input_validator = _compile(prepared["input_schema"], "$.input_schema", label)
        effects_validator = (
            _compile(prepared["effects_schema"], "$.effects_schema", label)
            if manifest.effects_schema is not None
            else None
        )
        entry_path = self._check_entry(folder, real_folder, manifest, label)
        return _Checked(
            folder=folder,
            real_folder=real_folder,
            manifest=manifest,
            entry=entry_path,
            input_validator=input_validator,
            effects_validator=effects_validator,
            warnings=tuple(found_warnings),
        )

    @staticmethod
    def _check_folder(folder: Path, root: Path | None, label: str) -> Path:
        real_root = _real(root if root is not None else folder.parent)
        real_folder = _real(folder)
        if not _inside(real_folder, real_root) or real_folder == real_root:
            raise ToolPathOutsideRoot(
                f"the tool folder is a link to {real_folder}, outside its root {real_root}",
                tool=label,
                path=str(folder),
            )
        if not real_folder.is_dir():
            raise ToolNotFound(f"no tool folder at {folder}", tool=label, path=str(folder))
        return real_folder

    @staticmethod
    def _check_entry(folder: Path, real_folder: Path, manifest: ToolManifest, label: str) -> Path:
        entry = folder / manifest.entry
        real_entry = _real(entry)
        if not _inside(real_entry, real_folder):
            raise ToolPathOutsideRoot(
                f"entry {json_text(manifest.entry)} leads to {real_entry}, outside the tool folder",
                tool=label,
                path=str(entry),
                field="$.entry",
            )
        if not real_entry.is_file():
            raise ManifestInvalid(
                f"entry {json_text(manifest.entry)} is not a file in the tool folder",
                field="$.entry",
                tool=label,
            )
        return real_entry

    def _import(self, entry: Path, manifest: ToolManifest, label: str) -> ModuleType:
        stat = entry.stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
        cached = self._modules.get(entry)
        if cached is not None and cached.stamp == stamp:
            return cached.module
        digest = hashlib.sha1(str(entry).encode(), usedforsecurity=False).hexdigest()[:16]
        module_name = f"_raw_tool_{manifest.id.replace('-', '_')}_{digest}"
        spec = importlib.util.spec_from_file_location(module_name, entry)
        if spec is None or spec.loader is None:  # pragma: no cover - .py files always load
            raise ToolImportFailed(f"cannot import {entry}", tool=label)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            # Compiled from the checked source, never from __pycache__: a bytecode cache is
            # one more path (possibly a link out of the folder) whose code would run.
            code = compile(entry.read_bytes(), str(entry), "exec", dont_inherit=True)
            exec(code, module.__dict__)  # the tool's own entry module, checked above
        except (Exception, SystemExit) as exc:
            sys.modules.pop(module_name, None)
            if isinstance(exc, SyntaxError):
                file, line = Path(exc.filename or str(entry)).name, exc.lineno
            else:
                where = traceback.extract_tb(exc.__traceback__)[-1]
                file, line = Path(where.filename).name, where.lineno
            raise ToolImportFailed(
                f"importing {manifest.entry} raised {type(exc).__name__}: {exc}"
                f" ({file}, line {line})",
                tool=label,
                path=str(entry),
            ) from exc
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        self._modules[entry] = _CachedModule(stamp=stamp, module=module)
        return module


def define_tool(
    definition: Mapping[str, Any],
    *,
    identity: str,
    handler: Callable[..., Any],
    origin: Path,
    validate_args: Callable[[Any], str | None] | None = None,
) -> LoadedTool:
    """A tool that is no folder — one a tool source gets from a server — as a
    :class:`LoadedTool`.

    ``definition`` holds the fields of a ``tool.json`` but ``entry`` (``api_version``,
    ``id``, ``version``, ``name``, ``description``, ``input_schema``, and optionally
    ``condition_sources`` and ``panels``), checked by the rules a manifest is checked by:
    an input schema raw cannot compile is ``manifest_invalid`` naming ``identity`` and the
    field, never a tool whose calls go unvalidated. ``handler(args, context)`` serves the
    calls; ``origin`` stands where a folder tool has its folder (raw selects one tool per
    origin: give each tool its own). The manifest's ``entry`` is empty.
    """
    if "entry" in definition:
        raise ManifestInvalid("a defined tool has no entry module", field="$.entry", tool=identity)
    text = json.dumps({**definition, "entry": "./defined.py"}, ensure_ascii=False)
    try:
        manifest, prepared = parse_manifest_and_schemas(text, tool=identity)
    except ManifestError as exc:
        exc.message = f"{identity}: {exc.message}"
        exc.args = (exc.message,)
        raise
    input_validator = _compile(prepared["input_schema"], "$.input_schema", identity)
    if manifest.effects_schema is not None:
        raise ManifestInvalid(
            "a defined tool declares no effects_schema", field="$.effects_schema", tool=identity
        )
    return LoadedTool(
        identity=identity,
        folder=origin,
        manifest=attrs.evolve(manifest, entry=""),
        handler=handler,
        validate_args=validate_args,
        describe_effects=None,
        input_validator=input_validator,
        effects_validator=None,
    )


def _name_the_tool(error: ManifestError, folder: Path, identity: str | None) -> None:
    """Begin ``error``'s message with the tool and the file it is about, and give it the
    file as ``path`` (the manifest, unless the error names another file): reached through
    a config, ``unknown field (at $.author)`` alone names neither."""
    file = error.context.setdefault("path", str(folder / MANIFEST_FILE))
    who = f"{identity} ({file})" if identity else str(file)
    error.message = f"{who}: {error.message}"
    error.args = (error.message,)


def _compile(prepared: Any, field: str, label: str) -> SchemaValidator:
    """Compile a manifest's prepared schema; what the compiler refuses is
    ``manifest_invalid``."""
    try:
        return compile_schema(prepared)
    except SchemaDefinitionError as exc:
        raise ManifestInvalid(
            exc.message, field=exc.path if exc.path != "$" else field, tool=label
        ) from None


def _optional_callable(
    module: ModuleType, name: str, label: str, entry: Path
) -> Callable[..., Any] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise ToolEntryInvalid(
            f"{name} must be a function, found {type(value).__name__}",
            tool=label,
            path=str(entry),
        )
    return value


def _exports(
    module: ModuleType, manifest: ToolManifest, label: str, entry: Path
) -> tuple[Callable[..., Any], Callable[[Any], str | None] | None, Callable[..., Any] | None]:
    handler = getattr(module, "handler", None)
    if handler is None or not callable(handler):
        raise ToolEntryInvalid(
            f"{manifest.entry} must export handler(args, context)", tool=label, path=str(entry)
        )
    validate_args = _optional_callable(module, "validate_args", label, entry)
    describe_effects = _optional_callable(module, "describe_effects", label, entry)
    if describe_effects is not None and manifest.effects_schema is None:
        raise ManifestInvalid(
            f"{manifest.entry} exports describe_effects, so effects_schema is required",
            field="$.effects_schema",
            tool=label,
        )
    if describe_effects is None and manifest.effects_schema is not None:
        raise ToolEntryInvalid(
            f"the manifest declares effects_schema but {manifest.entry} exports no"
            " describe_effects(args, context)",
            tool=label,
            path=str(entry),
        )
    return handler, validate_args, describe_effects

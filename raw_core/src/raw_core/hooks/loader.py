"""Turn a hook folder into a :class:`LoadedHook`, and an agent's ``hooks.use`` into its hooks.

A hook folder holds ``hook.json`` and, usually, the program it runs. The folder rules of
tools apply: the folder, once links are resolved, stays inside its root (the hooks
directory it was found in), ``hook.json`` stays inside the folder, and so does a program
named ``./<path>`` — which must be an executable file. ``id`` equals the folder's name.
Nothing is run while loading.

Where hooks are found: ``agent/<folder>`` in ``hooks/`` beside the config file,
``local/<folder>`` in the user's ``$XDG_CONFIG_HOME/raw/hooks/`` (``~/.config/raw/hooks``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from raw_core._convert import json_text
from raw_core.config.discovery import user_config_dir
from raw_core.errors import HookError, HookInvalid, HookNotFound
from raw_core.hooks.manifest import HookManifest, parse_hook_manifest
from raw_core.policy import Glob
from raw_core.policy.predicate import PreparedPredicate

__all__ = ["HOOK_FILE", "LoadedHook", "load_hook", "load_hooks", "user_hooks_dir"]

HOOK_FILE: Final = "hook.json"
_ANY_TOOL: Final = "*"


def user_hooks_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/raw/hooks``, or ``~/.config/raw/hooks``: where ``local/`` hooks
    live (an unset, empty or relative ``XDG_CONFIG_HOME`` is ignored)."""
    return user_config_dir(environ) / "hooks"


@attrs.frozen(kw_only=True, eq=False)
class LoadedHook:
    """A hook ready to be subscribed: its identity, real folder, manifest, the command as
    it runs (a ``./`` program resolved to its real path), its ``match`` glob and its
    ``when`` predicate, compiled but not yet bound to any tool."""

    identity: str
    folder: Path
    manifest: HookManifest
    argv: tuple[str, ...]
    match: Glob
    when: PreparedPredicate | None

    @property
    def events(self) -> tuple[str, ...]:
        """The events it runs at, in manifest order."""
        return tuple(self.manifest.events)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``raw hooks list --json`` prints."""
        manifest = self.manifest
        when = manifest.when
        return {
            "identity": self.identity,
            "version": manifest.version,
            "description": manifest.description,
            "events": list(manifest.events),
            "command": list(manifest.command),
            "match": manifest.match,
            "when": attrs.asdict(when) if when is not None else None,
            "timeout_ms": manifest.timeout_ms,
            "folder": str(self.folder),
        }


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def load_hook(
    folder: str | os.PathLike[str], *, identity: str | None = None, root: Path | None = None
) -> LoadedHook:
    """Load the hook in ``folder``; ``root`` (default: its parent) is the directory it must
    stay inside once links are resolved. ``identity`` defaults to ``local/<folder name>``.

    Raises ``hook_not_found`` when there is no folder and ``hook_invalid`` for every broken
    rule; each message begins with the hook and its file, which the error carries as
    ``path``.
    """
    path = Path(os.path.abspath(folder))
    label = identity or str(path)
    try:
        return _load(path, identity or f"local/{path.name}", root, label)
    except HookError as exc:
        file = exc.context.setdefault("path", str(path / HOOK_FILE))
        exc.context.setdefault("hook", label)
        exc.message = (
            f"{identity} ({file}): {exc.message}" if identity else f"{file}: {exc.message}"
        )
        exc.args = (exc.message,)
        raise


def _load(folder: Path, identity: str, root: Path | None, label: str) -> LoadedHook:
    real_root = _real(root if root is not None else folder.parent)
    real_folder = _real(folder)
    if not _inside(real_folder, real_root) or real_folder == real_root:
        raise HookInvalid(
            f"the hook folder is a link to {real_folder}, outside its root {real_root}",
            path=str(folder),
        )
    if not real_folder.is_dir():
        raise HookNotFound(f"no hook folder at {folder}", path=str(folder))
    manifest_path = folder / HOOK_FILE
    real_manifest = _real(manifest_path)
    if not _inside(real_manifest, real_folder):
        raise HookInvalid(
            f"{HOOK_FILE} is a link to {real_manifest}, outside the hook folder",
            path=str(manifest_path),
        )
    try:
        text = real_manifest.read_bytes()
    except FileNotFoundError:
        raise HookInvalid(f"the folder has no {HOOK_FILE}", field="$") from None
    except OSError as exc:
        raise HookInvalid(f"cannot read {HOOK_FILE}: {exc.strerror}", field="$") from None
    manifest, when = parse_hook_manifest(text, hook=label)
    if manifest.id != folder.name:
        raise HookInvalid(
            f"id must equal the folder name {json_text(folder.name)},"
            f" found {json_text(manifest.id)}",
            field="$.id",
        )
    argv = (_program(folder, real_folder, manifest.command[0]), *manifest.command[1:])
    return LoadedHook(
        identity=identity,
        folder=real_folder,
        manifest=manifest,
        argv=argv,
        match=Glob(manifest.match if manifest.match is not None else _ANY_TOOL),
        when=when,
    )


def _program(folder: Path, real_folder: Path, program: str) -> str:
    """``argv[0]`` as it runs: a ``./`` path checked and resolved in the folder, anything
    else (a name looked up on PATH when it runs, an absolute path) as written."""
    if not program.startswith("./"):
        return program
    path = folder / program[2:]
    real = _real(path)
    if not _inside(real, real_folder) or real == real_folder:
        raise HookInvalid(
            f"command[0] {json_text(program)} leads to {real}, outside the hook folder",
            field="$.command[0]",
            path=str(path),
        )
    if not real.is_file():
        raise HookInvalid(
            f"command[0] {json_text(program)} is not a file in the hook folder",
            field="$.command[0]",
        )
    if not os.access(real, os.X_OK):
        raise HookInvalid(
            f"command[0] {json_text(program)} is not executable (make it so: chmod +x)",
            field="$.command[0]",
            path=str(path),
        )
    return str(real)


def load_hooks(
    use: Sequence[str],
    *,
    config_dir: Path | None,
    local_dir: Path | None = None,
    field: str = "$.hooks.use",
) -> tuple[LoadedHook, ...]:
    """Load the hooks ``hooks.use`` selects, in order: ``agent/<folder>`` from ``hooks/``
    in ``config_dir``, ``local/<folder>`` from ``local_dir`` (default
    :func:`user_hooks_dir`). A missing folder is ``hook_not_found`` with ``field``
    ``<field>[<index>]``; a broken one ``hook_invalid`` (its ``field`` is in ``hook.json``)."""
    local = local_dir if local_dir is not None else user_hooks_dir()
    loaded: list[LoadedHook] = []
    for index, identity in enumerate(use):
        source, _, name = identity.partition("/")
        if source == "agent":
            if config_dir is None:
                raise HookNotFound(
                    f"{identity}: agent/ hooks live beside a config file, and none was given",
                    field=f"{field}[{index}]",
                    hook=identity,
                )
            directory = config_dir / "hooks"
        else:
            directory = local
        folder = directory / name
        if not os.path.lexists(folder):  # a link, even a dangling one, is load_hook's to judge
            raise HookNotFound(
                f"{identity}: no hook folder at {folder}",
                field=f"{field}[{index}]",
                hook=identity,
                path=str(folder),
            )
        loaded.append(load_hook(folder, identity=identity, root=directory))
    return tuple(loaded)

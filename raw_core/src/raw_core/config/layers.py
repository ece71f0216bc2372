"""The config's layers: a managed config, the user's config and a project's, composed.

Which file provides what (docs/reference/config.md, "Layers"):

* the **managed** config — the file ``$RAW_MANAGED_CONFIG`` names, else
  :data:`SYSTEM_MANAGED_CONFIG` when it exists — holds only ``rules``: the managed floor;
* the **user** config (``$XDG_CONFIG_HOME/raw/config.json``) provides its ``models``,
  ``vars``, ``sessions`` and its top-level ``rules`` (the user floor), and its agents when
  no project config is used;
* the **project** config (a trusted ``./raw.json``, or ``--config FILE`` in its place)
  provides the agents, ``default_agent``, ``skills`` and plug-in sections, and may add
  models and variables; where it defines a model or variable name the user's config also
  defines, the user's definition wins, so a project cannot redirect a user's credentials.
  Its own top-level ``rules`` are a floor too.

Every floor applies to every agent after the agent's own rules and can only tighten
(:mod:`raw_core.policy.floors`). A project config used without a user config works as it
did alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

from raw_core._json import JsonInputError, loads_strict
from raw_core.config._checks import PluginRecords
from raw_core.config._model import (
    MAX_CONFIG_BYTES,
    Config,
    ConfigLayer,
    Floor,
    SessionsConfig,
    VarDefinition,
)
from raw_core.config._reading import check_config, load_config, parse_config, read_config_bytes
from raw_core.config.discovery import no_config, trusted_project_config, user_config_path
from raw_core.errors import ConfigInvalid, ConfigNotFound, RawError

__all__ = [
    "MANAGED_CONFIG_ENV",
    "SYSTEM_MANAGED_CONFIG",
    "ConfigFiles",
    "check_layers",
    "compose_layers",
    "find_layers",
    "load_layers",
    "managed_config_path",
]

MANAGED_CONFIG_ENV: Final = "RAW_MANAGED_CONFIG"
"""The environment variable that names the managed config (in place of the system path)."""
SYSTEM_MANAGED_CONFIG: Final = Path("/etc/raw/managed.json")
"""Where an administrator puts the managed config."""


@attrs.frozen(kw_only=True)
class ConfigFiles:
    """The files the layers are read from; ``None`` where a layer has no file."""

    managed: Path | None = None
    user: Path | None = None
    project: Path | None = None


def managed_config_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The managed config: the file ``$RAW_MANAGED_CONFIG`` names (it must exist: an
    administrator's floor never silently disappears), else :data:`SYSTEM_MANAGED_CONFIG`
    when there is one, else None."""
    env = os.environ if environ is None else environ
    named = env.get(MANAGED_CONFIG_ENV, "")
    if named:
        return Path(os.path.abspath(named))
    return SYSTEM_MANAGED_CONFIG if SYSTEM_MANAGED_CONFIG.is_file() else None


def find_layers(
    explicit: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConfigFiles:
    """The files of each layer. The project layer is ``explicit`` (``--config FILE``:
    explicit trust) or a ``./raw.json`` in a trusted folder; the user's file counts once,
    even when it is also the one given.

    Raises ``config_untrusted`` for a ``./raw.json`` in an untrusted folder (saying how to
    trust it) and ``config_not_found`` when neither a project nor a user config exists.
    """
    found = user_config_path(environ)
    user = found if found.is_file() else None
    project = (
        Path(os.path.abspath(explicit))
        if explicit is not None
        else trusted_project_config(cwd, environ)
    )
    if project is not None and user is not None and _same(project, user):
        project = None
    if project is None and user is None:
        raise no_config(environ)
    return ConfigFiles(managed=managed_config_path(environ), user=user, project=project)


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def load_layers(files: ConfigFiles, *, host: PluginRecords | None = None) -> Config:
    """Read each layer's file and compose them (:func:`compose_layers`). Every error names
    the file it is in (``path``) and the field."""
    managed = _load_managed(files.managed) if files.managed is not None else None
    user = load_config(files.user, host=host) if files.user is not None else None
    project = (
        load_config(files.project, host=host, lower=user) if files.project is not None else None
    )
    return compose_layers(project=project, user=user, managed=managed)


def check_layers(
    files: ConfigFiles, *, host: PluginRecords | None = None
) -> tuple[Config | None, list[RawError]]:
    """:func:`load_layers` without stopping at the first broken file, for ``raw config
    validate``: every layer is checked and every problem returned (each error lists its
    file's, as :func:`~raw_core.config.parse_config` does). The composed config comes
    back when every file could be read into one, even with wrong values or references
    (for checking what its agents select, never for running it); None otherwise. Where
    the user's config cannot be read at all, the project's is still checked, but its
    references (names it may take from the user's config) are not."""
    errors: list[RawError] = []
    managed = user = project = None
    broken = False
    if files.managed is not None:
        try:
            managed = _load_managed(files.managed)
        except RawError as exc:
            errors.append(exc)
            broken = True
    if files.user is not None:
        user, error = _check_file(files.user, host=host)
        errors += [error] if error is not None else []
        broken = broken or user is None
    if files.project is not None:
        unread = files.user is not None and user is None
        project, error = _check_file(files.project, host=host, lower=user, references=not unread)
        errors += [error] if error is not None else []
        broken = broken or project is None
    if broken:
        return None, errors
    return compose_layers(project=project, user=user, managed=managed), errors


def _check_file(
    path: Path,
    *,
    host: PluginRecords | None,
    lower: Config | None = None,
    references: bool = True,
) -> tuple[Config | None, RawError | None]:
    file = Path(os.path.abspath(path))
    try:
        text = read_config_bytes(file)
    except ConfigNotFound as error:
        return None, error
    return check_config(text, path=file, host=host, lower=lower, references=references)


def _load_managed(path: Path) -> Config:
    """A managed config: ``{"rules": [...]}`` and nothing else."""
    named_by = MANAGED_CONFIG_ENV if path != SYSTEM_MANAGED_CONFIG else None
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise ConfigNotFound(
            f"no managed config at {path} (named by ${MANAGED_CONFIG_ENV}, or the system path"
            f" {SYSTEM_MANAGED_CONFIG})",
            path=str(path),
            layer="managed",
            named_by=named_by,
        ) from None
    except OSError as exc:
        raise ConfigNotFound(
            f"cannot read {path}: {exc.strerror}",
            path=str(path),
            layer="managed",
            named_by=named_by,
        ) from None
    try:
        data = loads_strict(text, max_bytes=MAX_CONFIG_BYTES)
    except JsonInputError as exc:
        raise ConfigInvalid(f"{path} is not valid JSON: {exc}", field="$", path=str(path)) from None
    if isinstance(data, dict):
        for key in data:
            if key != "rules":
                raise ConfigInvalid(
                    f"a managed config holds only rules (the managed floor); {key!r} belongs"
                    " in the user's or a project's config",
                    field=f"$.{key}",
                    path=str(path),
                )
    return parse_config(text, path=path)


def compose_layers(
    *,
    project: Config | None = None,
    user: Config | None = None,
    managed: Config | None = None,
) -> Config:
    """One config from its layers (see the module docstring for which provides what).

    An embedding app composes its own layers with this (or passes one :class:`Config` as
    it is, with no layers). Raises ``config_not_found`` with neither a project nor a user
    config.
    """
    floors: list[Floor] = []
    layers: list[ConfigLayer] = []
    if managed is not None:
        layers.append(ConfigLayer(kind="managed", path=managed.path))
    if user is not None:
        layers.append(ConfigLayer(kind="user", path=user.path))
    if project is not None:
        layers.append(ConfigLayer(kind="project", path=project.path))
        if project.rules:
            floors.append(Floor(layer="project", rules=project.rules, path=project.path))
    if user is not None and user.rules:
        floors.append(Floor(layer="user", rules=user.rules, path=user.path))
    if managed is not None and managed.rules:
        floors.append(Floor(layer="managed", rules=managed.rules, path=managed.path))
    if project is None:
        if user is None:
            raise ConfigNotFound("no config: neither a project nor a user config is given")
        return attrs.evolve(user, floors=tuple(floors), layers=tuple(layers))
    if user is None:
        return attrs.evolve(project, floors=tuple(floors), layers=tuple(layers))
    unused = [
        f"{kind} {name!r} of {project.path} is not used: {user.path} defines it"
        for kind, theirs, ours in (
            ("model", project.models, user.models),
            ("variable", project.vars, user.vars),
        )
        for name in theirs
        if name in ours
    ]
    if project.sessions not in (SessionsConfig(), user.sessions):  # a project that set none
        unused.append(f"sessions of {project.path} is not used: {user.path} provides sessions")
    return attrs.evolve(
        project,
        models={**project.models, **user.models},
        vars={**project.vars, **_anchored(user.vars, user.directory)},
        sessions=user.sessions,
        floors=tuple(floors),
        layers=tuple(layers),
        unused=tuple(unused),
    )


def _anchored(
    definitions: Mapping[str, VarDefinition], directory: Path | None
) -> dict[str, VarDefinition]:
    """The user's variables with a relative ``from.file`` made absolute against the user's
    config folder (the composed config's folder is the project's)."""
    anchored: dict[str, VarDefinition] = {}
    for name, definition in definitions.items():
        file = definition.source.file
        if file is not None and directory is not None and not os.path.isabs(file):
            file = str(directory / os.path.expanduser(file))
            definition = attrs.evolve(definition, source=attrs.evolve(definition.source, file=file))
        anchored[name] = definition
    return anchored

"""Which config file raw uses, and which folders the user trusts.

In order: the file given with ``--config`` (explicit trust); else ``./raw.json`` in the
working directory, but only once the user has trusted that folder (``raw config trust``),
because such a file can select ``agent/`` tools, command hooks and command variables, which
run code; else ``$XDG_CONFIG_HOME/raw/config.json`` (``~/.config/raw/config.json``). The
user's config and the managed config are layered around the project's file
(:mod:`raw_core.config.layers`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import ConfigInvalid, ConfigNotFound, ConfigUntrusted

__all__ = [
    "PROJECT_CONFIG",
    "find_config",
    "is_trusted",
    "no_config",
    "trust_folder",
    "trusted_folders",
    "trusted_project_config",
    "user_config_dir",
    "user_config_path",
]

PROJECT_CONFIG: Final = "raw.json"
_TRUST_FILE: Final = "trusted-folders.json"


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/raw``, or ``~/.config/raw`` (a relative XDG value is ignored)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "raw"


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user's config file: ``<user config dir>/config.json``."""
    return user_config_dir(environ) / "config.json"


def trusted_folders(environ: Mapping[str, str] | None = None) -> list[str]:
    """The folders the user trusted, as real paths."""
    path = user_config_dir(environ) / _TRUST_FILE
    try:
        data = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return []
    except (OSError, JsonInputError):
        return []  # an unreadable trust list trusts nothing
    folders = data.get("folders") if isinstance(data, dict) else None
    return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []


def is_trusted(folder: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``folder`` (links resolved) is one the user trusted."""
    return os.path.realpath(folder) in trusted_folders(environ)


def trust_folder(folder: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Add ``folder`` to the trusted folders (written atomically, mode 0600); return its
    real path."""
    real = Path(os.path.realpath(folder))
    if not real.is_dir():
        raise ConfigNotFound(f"no folder at {folder}", path=str(folder))
    directory = user_config_dir(environ)
    target = directory / _TRUST_FILE
    folders = trusted_folders(environ)
    if str(real) not in folders:
        folders.append(str(real))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".trusted-", suffix=".json")
    except OSError as exc:
        raise _unwritable(target, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"folders": folders}, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _unwritable(target, exc) from None
        raise
    return real


def _unwritable(target: Path, error: OSError) -> ConfigInvalid:
    return ConfigInvalid(
        f"cannot write the trusted folders to {target}: {error.strerror or error}; the user"
        " config folder must be a folder raw can write (XDG_CONFIG_HOME, or ~/.config)",
        path=str(target),
    )


def trusted_project_config(
    cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> Path | None:
    """``./raw.json`` in ``cwd`` when its folder is trusted; None when there is none.
    Raises ``config_untrusted`` (saying how to trust it) for one in an untrusted folder."""
    here = cwd if cwd is not None else Path.cwd()
    project = here / PROJECT_CONFIG
    if not project.is_file():
        return None
    if is_trusted(here, environ):
        return project.absolute()
    raise ConfigUntrusted(
        f"{project} can select agent/ tools, command hooks and command variables, which run"
        f" code, and this folder is not trusted. Trust it with `raw config trust {here}`,"
        f" or pass the file explicitly with --config {project}",
        path=str(project),
    )


def no_config(environ: Mapping[str, str] | None = None) -> ConfigNotFound:
    """The error for no config at all, saying what to do."""
    user = user_config_path(environ)
    return ConfigNotFound(
        f"no config file: pass --config FILE, add a trusted ./{PROJECT_CONFIG}, or create"
        f" {user} with `raw config init`",
        path=str(user),
    )


def find_config(
    explicit: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """The one file that provides the agents (see the module docstring); the layers
    around it are found by :func:`raw_core.config.layers.find_layers`.

    Raises ``config_untrusted`` for a ``./raw.json`` in an untrusted folder (saying how to
    trust it) and ``config_not_found`` when there is no config at all.
    """
    if explicit is not None:
        return Path(os.path.abspath(explicit))
    project = trusted_project_config(cwd, environ)
    if project is not None:
        return project
    user = user_config_path(environ)
    if user.is_file():
        return user
    raise no_config(environ)

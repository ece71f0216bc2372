"""Reading a config file into its records (:mod:`raw_core.config._model`): strict JSON, every
key validated and unknown keys rejected, each problem with the JSON path of its field;
:func:`check_config` collects every problem of a file where :func:`parse_config` raises
them as one ``config_invalid``."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Final

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from raw_core._convert import (
    FieldProblem,
    FieldValueError,
    StructureFailed,
    json_kind,
    make_converter,
    structure,
)
from raw_core._json import JsonInputError, loads_strict
from raw_core.config._checks import (
    PluginRecords,
    backend_problems,
    explain_unknown,
    reference_problems,
    validated,
    value_problems,
)
from raw_core.config._hooks import (
    hook_problems,
)
from raw_core.config._model import (
    MAX_CONFIG_BYTES,
    BackendConfig,
    Config,
    VarDefinition,
    _ConfigFile,
)
from raw_core.config._rules import (
    Match,
    structure_match,
)
from raw_core.errors import ConfigInvalid, ConfigNotFound
from raw_core.frozen import freeze

__all__ = ["check_config", "load_config", "parse_config", "read_config_bytes"]


def _structure_backend(value: Any, _type: Any) -> BackendConfig:
    if not isinstance(value, dict):
        raise ValueError(
            f'expected an object such as {{"type": "sqlite"}}, found {json_kind(value)}'
        )
    kind = value.get("type", "sqlite")
    if not isinstance(kind, str) or not kind:
        raise FieldValueError(
            "type", f"expected the name of a session backend, found {json_kind(kind)}"
        )
    options = {k: v for k, v in value.items() if k != "type"}
    return BackendConfig(type=kind, options=freeze(options))


def _make_converter() -> cattrs.Converter:
    converter = make_converter()
    converter.register_structure_hook_func(lambda type_: type_ == Match, structure_match)
    converter.register_structure_hook(BackendConfig, _structure_backend)
    converter.register_structure_hook(
        VarDefinition,
        make_dict_structure_fn(
            VarDefinition,
            converter,
            _cattrs_forbid_extra_keys=True,
            _cattrs_detailed_validation=True,
            source=override(rename="from"),
        ),
    )
    return converter


_CONVERTER: Final = _make_converter()


def parse_config(
    text: str | bytes,
    *,
    path: Path | None = None,
    host: PluginRecords | None = None,
    lower: Config | None = None,
) -> Config:
    """Parse and check the text of a config file; every error names its JSON path.

    The error raised is the first problem; ``error.context["problems"]`` lists every one
    (``raw config validate`` prints them all). With ``host``, the top-level keys its
    plug-ins claim are validated by them and kept in :attr:`Config.sections`, and
    ``sessions.backend`` is checked against the backends they register. Without one, a
    plug-in's key is unknown, and a backend other than ``sqlite`` is accepted unchecked
    (the app checks it later, with its host). ``lower`` is a lower layer (the user's
    config, under a project's) whose models and variables this file's references may
    name without defining them.
    """
    config, error = check_config(text, path=path, host=host, lower=lower)
    if error is not None:
        raise error
    assert config is not None
    return config


def check_config(
    text: str | bytes,
    *,
    path: Path | None = None,
    host: PluginRecords | None = None,
    lower: Config | None = None,
    references: bool = True,
) -> tuple[Config | None, ConfigInvalid | None]:
    """:func:`parse_config` without raising, for a check that goes on past a broken file:
    the config and the error listing every problem (None when there is none). The config
    is None when the file is not JSON or a field has the wrong type; when only values or
    references are wrong it is the file as read, for checking what it selects (its agents'
    tools and skills) — never for running it. ``references=False`` leaves the names a file
    may take from a lower layer unchecked (when that layer could not be read)."""
    where = str(path) if path is not None else "config"
    try:
        data = loads_strict(text, max_bytes=MAX_CONFIG_BYTES)
    except JsonInputError as exc:
        error = ConfigInvalid(f"{where} is not valid JSON: {exc}", field="$", path=where)
        return None, error
    claimed = host.config_sections() if host is not None else {}
    core = data
    sections: dict[str, Any] = {}
    problems: list[FieldProblem] = []
    if isinstance(data, dict):
        core = {k: v for k, v in data.items() if k not in claimed}
        for name in (k for k in data if k in claimed):
            assert host is not None
            owner = host.registered_by("config_section", name)
            sections[name] = validated(
                claimed[name].validate, data[name], f"$.{name}", plugin=owner, problems=problems
            )
    try:
        parsed = structure(_CONVERTER, core, _ConfigFile)
    except StructureFailed as exc:
        return None, _invalid(explain_unknown(exc.problems, claimed) + problems, where)
    problems = (
        problems
        + value_problems(parsed)
        + backend_problems(
            parsed.sessions.backend,
            host,
            frozenset(parsed.vars) | (frozenset(lower.vars) if lower is not None else frozenset()),
        )
        + (
            reference_problems(
                parsed,
                models=lower.models if lower is not None else None,
                variables=frozenset(lower.vars) if lower is not None else frozenset(),
            )
            if references
            else []
        )
        + hook_problems(parsed)
    )
    config = Config(
        agents=parsed.agents,
        models=parsed.models,
        vars=parsed.vars,
        skills=parsed.skills,
        sessions=parsed.sessions,
        default_agent=parsed.default_agent,
        path=path,
        sections=sections,
        rules=parsed.rules,
    )
    return config, (_invalid(problems, where) if problems else None)


_RENAMED: Final = re.compile(r"^(\$\.vars(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\]))\.source\b")


def _file_path(path: str) -> str:
    """The JSON path as the file spells it (``VarDefinition.source`` is ``from`` there)."""
    return _RENAMED.sub(r"\1.from", path)


def _invalid(problems: list[FieldProblem], where: str) -> ConfigInvalid:
    problems = [attrs.evolve(p, path=_file_path(p.path)) for p in problems]
    first = problems[0]
    error = ConfigInvalid(first.message, field=first.path, path=where)
    error.context["problems"] = [attrs.asdict(p) for p in problems]
    return error


def load_config(
    path: str | os.PathLike[str],
    *,
    host: PluginRecords | None = None,
    lower: Config | None = None,
) -> Config:
    """Read and check the config file at ``path`` (see :func:`parse_config` for ``host``
    and ``lower``)."""
    file = Path(os.path.abspath(path))
    return parse_config(read_config_bytes(file), path=file, host=host, lower=lower)


def read_config_bytes(file: Path) -> bytes:
    """The bytes of the config file at ``file`` (an absolute path); ``config_not_found``
    saying why when it cannot be read."""
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise ConfigNotFound(f"no config file at {file}", path=str(file)) from None
    except OSError as exc:
        raise ConfigNotFound(f"cannot read {file}: {exc.strerror}", path=str(file)) from None

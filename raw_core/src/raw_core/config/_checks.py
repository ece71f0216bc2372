"""The config file's checks beyond types: values, references, plug-in sections and the
session backend. Each returns every problem it finds, so that ``raw config validate`` can
print them all at once; :func:`raw_core.config.parse_config` runs them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import attrs

from raw_core._convert import FieldProblem, json_kind
from raw_core._identity import parse_identity
from raw_core.errors import ConfigInvalid

if TYPE_CHECKING:
    from raw_core.config._model import (
        AgentConfig,
        BackendConfig,
        ConfigSection,
        ModelConfig,
        _ConfigFile,
    )
    from raw_core.sessions.backend import SessionBackendRecord

__all__ = [
    "MAX_EXPIRY_DAYS",
    "MAX_VAR_TIMEOUT_MS",
    "SQLITE_OPTIONS",
    "backend_problems",
    "explain_unknown",
    "reference_problems",
    "sqlite_problems",
    "validated",
    "value_problems",
]

MAX_EXPIRY_DAYS: Final = 36_500  # a century: past that, dates overflow
MAX_VAR_TIMEOUT_MS: Final = 600_000  # ten minutes, as for a bash command
SQLITE_OPTIONS: Final = frozenset({"directory"})
"""The options ``sessions.backend`` takes when its type is ``sqlite``."""
_VAR_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _under(field: str | None, base: str) -> bool:
    return field is not None and (field == base or field.startswith((f"{base}.", f"{base}[")))


def validated(
    validate: Callable[[Any, str], Any],
    value: Any,
    base: str,
    *,
    plugin: str,
    problems: list[FieldProblem],
) -> Any:
    """``validate(value, base)``: a plug-in's validator of the value at JSON path ``base``.

    Its findings (``config_invalid`` below ``base``) or its crash (reported as a problem
    naming the plug-in, never a traceback) are added to ``problems``; the result is what the
    validator returned, or None when it failed.
    """
    try:
        return validate(value, base)
    except ConfigInvalid as exc:
        listed = exc.context.get("problems")
        if isinstance(listed, list) and all(
            isinstance(p, dict) and _under(p.get("path"), base) for p in listed
        ):
            problems.extend(FieldProblem(path=p["path"], message=str(p["message"])) for p in listed)
        else:
            problems.append(
                FieldProblem(
                    path=exc.field if exc.field is not None and _under(exc.field, base) else base,
                    message=exc.message,
                )
            )
    except Exception as exc:
        problems.append(
            FieldProblem(
                path=base,
                message=f"plug-in {plugin!r} failed to validate this section:"
                f" {type(exc).__name__}: {exc}",
            )
        )
    return None


def explain_unknown(
    problems: list[FieldProblem], claimed: Mapping[str, ConfigSection]
) -> list[FieldProblem]:
    """Say, for an unknown top-level key, which keys the installed plug-ins claim."""
    extra = (
        f" (plug-ins claim: {', '.join(sorted(claimed))})"
        if claimed
        else " (no installed plug-in claims it)"
    )
    return [
        attrs.evolve(p, message=p.message + extra + _INSTALL_HINTS.get(p.path, ""))
        if p.message == "unknown field" and p.path.count(".") == 1 and "[" not in p.path
        else p
        for p in problems
    ]


_INSTALL_HINTS: Final = {"$.mcp": "; MCP servers are configured with raw-mcp: pip install raw-mcp"}
"""What to install for a top-level key that raw's own plug-ins claim."""


class PluginRecords(Protocol):
    """What the config checks ask of the plug-in host (a
    :class:`raw_core.plugins.PluginHost` is one): the config sections and session backends
    the plug-ins register, and which plug-in registered one. A protocol, because the
    plug-ins sit above the config, which they register sections of."""

    def config_sections(self) -> Mapping[str, ConfigSection]: ...

    def session_backends(self) -> Mapping[str, SessionBackendRecord]: ...

    def registered_by(
        self, kind: Literal["config_section", "session_backend"], name: str
    ) -> str: ...


def backend_problems(
    backend: BackendConfig,
    host: PluginRecords | None,
    variables: frozenset[str] = frozenset(),
) -> list[FieldProblem]:
    """``sessions.backend``: SQLite's options here, a plug-in backend's by its record,
    and the config variables a plug-in backend reads (each must be one of ``variables``,
    the names ``vars`` defines): every check the backend would make when it opens, bar
    reading the values."""
    base = "$.sessions.backend"
    if backend.type == "sqlite":
        return sqlite_problems(backend.options, base)
    if host is None:
        return []
    records = host.session_backends()
    record = records.get(backend.type)
    if record is None:
        available = ", ".join(["sqlite", *sorted(records)])
        return [
            FieldProblem(
                path=f"{base}.type",
                message=f"no session backend named {backend.type!r} (available: {available})",
            )
        ]
    problems: list[FieldProblem] = []
    owner = host.registered_by("session_backend", backend.type)
    if record.validate_config is not None:
        validated(record.validate_config, backend.options, base, plugin=owner, problems=problems)
    if record.variables is not None and not problems:
        read = validated(record.variables, backend.options, base, plugin=owner, problems=problems)
        problems += [
            FieldProblem(path=path, message=f"variable {name!r} is not defined in vars")
            for path, name in (read or {}).items()
            if name not in variables
        ]
    return problems


def sqlite_problems(options: Mapping[str, Any], base: str) -> list[FieldProblem]:
    """The ``sqlite`` backend's options: only ``directory``, a non-empty string naming an
    absolute folder or one starting with ``~`` (the rule
    :func:`raw_core.sessions.sqlite.record.validate_config` applies when it opens)."""
    takes = ", ".join(sorted(SQLITE_OPTIONS))
    found = [
        FieldProblem(
            path=f"{base}.{key}", message=f"unknown field (the sqlite backend takes: {takes})"
        )
        for key in options
        if key not in SQLITE_OPTIONS
    ]
    if "directory" not in options:
        return found
    directory = options["directory"]
    field = f"{base}.directory"
    if not isinstance(directory, str) or not directory:
        kind = "an empty string" if directory == "" else json_kind(directory)
        message = f"expected the folder of the session store as a non-empty string, found {kind}"
        found.append(FieldProblem(path=field, message=message))
    elif not os.path.isabs(os.path.expanduser(directory)):
        found.append(
            FieldProblem(
                path=field,
                message="expected an absolute folder (or one starting with ~), found"
                f" {json.dumps(directory, ensure_ascii=False)}",
            )
        )
    return found


def value_problems(parsed: _ConfigFile) -> list[FieldProblem]:
    """Rules on values, checked once every field has its type, so that all of them are
    reported together (a record's validator would stop at its first)."""
    found: list[FieldProblem] = []

    def positive(path: str, value: float | None, what: str = "a positive integer") -> None:
        if value is not None and not value > 0:
            found.append(FieldProblem(path=path, message=f"expected {what}, found {value}"))

    for name, model in parsed.models.items():
        positive(f"$.models.{name}.max_tokens", model.max_tokens)
        positive(f"$.models.{name}.context_window", model.context_window)
        if not 0 < model.compact_threshold <= 1:
            found.append(
                FieldProblem(
                    path=f"$.models.{name}.compact_threshold",
                    message="expected a share of the context window above 0 and at most 1,"
                    f" found {model.compact_threshold}",
                )
            )
        if model.temperature is not None and not 0 <= model.temperature <= 2:
            found.append(
                FieldProblem(
                    path=f"$.models.{name}.temperature",
                    message=f"expected a number from 0 to 2, found {model.temperature}",
                )
            )
    for name, var in parsed.vars.items():
        if var.source.command is not None and not var.source.command:
            found.append(
                FieldProblem(
                    path=f"$.vars.{name}.from.command",
                    message="expected a non-empty array: the program and its arguments",
                )
            )
        if not 0 < var.source.timeout_ms <= MAX_VAR_TIMEOUT_MS:
            found.append(
                FieldProblem(
                    path=f"$.vars.{name}.from.timeout_ms",
                    message=f"expected milliseconds above 0 and at most {MAX_VAR_TIMEOUT_MS},"
                    f" found {var.source.timeout_ms}",
                )
            )
    days = parsed.sessions.expire_after_days
    if not 0 < days <= MAX_EXPIRY_DAYS:
        found.append(
            FieldProblem(
                path="$.sessions.expire_after_days",
                message=f"expected a number of days above 0 and at most {MAX_EXPIRY_DAYS},"
                f" found {days}",
            )
        )
    for name, agent in parsed.agents.items():
        for index, text in enumerate(agent.tools.use):
            try:
                parse_identity(text)
            except ValueError as exc:
                found.append(
                    FieldProblem(path=f"$.agents.{name}.tools.use[{index}]", message=str(exc))
                )
        positive(f"$.agents.{name}.max_steps", agent.max_steps)
        positive(f"$.agents.{name}.max_output_bytes", agent.max_output_bytes)
        positive(f"$.agents.{name}.handler_timeout_ms", agent.handler_timeout_ms)
    return found


def reference_problems(
    parsed: _ConfigFile,
    *,
    models: Mapping[str, ModelConfig] | None = None,
    variables: frozenset[str] = frozenset(),
) -> list[FieldProblem]:
    """Names that must refer to something the file defines, or that a lower layer defines
    (``models`` and ``variables``: the user's config under a project's, whose definitions
    win where both define a name)."""
    found: list[FieldProblem] = []
    known_vars = set(parsed.vars) | variables
    effective = {**parsed.models, **(models or {})}
    known_models = set(effective)
    if parsed.default_agent is not None and parsed.default_agent not in parsed.agents:
        found.append(
            FieldProblem(
                path="$.default_agent",
                message=f"default_agent names {parsed.default_agent!r}, which is not an agent of"
                " this config",
            )
        )
    for name, model in parsed.models.items():
        if (
            model.api_key is not None
            and model.api_key.var is not None
            and (model.api_key.var not in known_vars)
        ):
            found.append(
                FieldProblem(
                    path=f"$.models.{name}.api_key.var",
                    message=f"variable {model.api_key.var!r} is not defined in vars",
                )
            )
    for name in parsed.vars:
        if not _VAR_NAME.fullmatch(name):
            found.append(
                FieldProblem(
                    path=f"$.vars[{json.dumps(name, ensure_ascii=False)}]",
                    message="expected a variable name (letters, digits"
                    " and _, not starting with a digit)",
                )
            )
    for name, agent in parsed.agents.items():
        if agent.model is not None and agent.model not in known_models:
            known = ", ".join(sorted(known_models)) or "none"
            found.append(
                FieldProblem(
                    path=f"$.agents.{name}.model",
                    message=f"model {agent.model!r} is not defined in models (defined: {known})",
                )
            )
        found += _vision_problems(effective, name, agent)
        for index, var in enumerate(agent.vars.use):
            if var not in known_vars:
                found.append(
                    FieldProblem(
                        path=f"$.agents.{name}.vars.use[{index}]",
                        message=f"variable {var!r} is not defined in vars",
                    )
                )
        for field_name, names in (("skills", agent.skills.use), ("vars", agent.vars.use)):
            seen: set[str] = set()
            for index, item in enumerate(names):
                if item in seen:
                    found.append(
                        FieldProblem(
                            path=f"$.agents.{name}.{field_name}.use[{index}]",
                            message=f"{item!r} is selected twice",
                        )
                    )
                seen.add(item)
    return found


VISION_TOOLS: Final = frozenset({"builtin/view_image"})
"""Tools whose results are images: an agent's model must accept them (``vision: true``)."""


def _vision_problems(
    models: Mapping[str, ModelConfig], name: str, agent: AgentConfig
) -> list[FieldProblem]:
    """An agent that selects a tool of :data:`VISION_TOOLS` names a model (of ``models``:
    the ones it will use) with ``vision: true`` (an agent without a model gets its provider
    from the application: not checked)."""
    model = models.get(agent.model) if agent.model is not None else None
    if model is None or model.vision:
        return []
    return [
        FieldProblem(
            path=f"$.agents.{name}.tools.use[{index}]",
            message=f"{identity} returns images, and model {agent.model!r} does not accept"
            f" them: set models.{agent.model}.vision to true for a model that does, or"
            " remove the tool",
        )
        for index, identity in enumerate(agent.tools.use)
        if identity in VISION_TOOLS
    ]

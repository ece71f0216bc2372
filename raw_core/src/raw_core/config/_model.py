"""The config file: records for every section, and loading with JSON paths in errors.

A first version that covers what raw uses today: agents (model, system prompt, tools.use,
tools.rules, max_steps, max_output_bytes, handler_timeout_ms), model definitions and
``default_agent``. Every key is validated and unknown keys are rejected, with the JSON path
of the field in the error. Deeper checks that need the selected tools (a rule's predicate
against a tool's schema) happen when the agent's tools are loaded.

raw validates the keys it owns (:data:`CORE_SECTIONS`). A plug-in claims another top-level
key with a :class:`ConfigSection` (``raw_register_config_sections``); given a plug-in host,
:func:`parse_config` hands the key's value to the plug-in's validator and keeps what it
returns in :attr:`Config.sections`. A key nobody claims is still ``config_invalid``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

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
    SQLITE_OPTIONS,
    PluginRecords,
    backend_problems,
    explain_unknown,
    reference_problems,
    validated,
    value_problems,
)
from raw_core.config._hooks import (
    DEFAULT_HOOK_TIMEOUT_MS,
    MAX_HOOK_TIMEOUT_MS,
    HooksConfig,
    hook_problems,
)
from raw_core.config._rules import (
    ConfigLayer,
    Effect,
    Floor,
    LayerKind,
    Match,
    Predicate,
    Rule,
    RuleExamples,
    structure_match,
)
from raw_core.config._vars import check_command, check_env_name, check_file
from raw_core.errors import ConfigInvalid, ConfigNotFound
from raw_core.frozen import FrozenDict, freeze

__all__ = [
    "CORE_SECTIONS",
    "DEFAULT_HANDLER_TIMEOUT_MS",
    "DEFAULT_HOOK_TIMEOUT_MS",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STEPS",
    "MAX_HOOK_TIMEOUT_MS",
    "SQLITE_OPTIONS",
    "AgentConfig",
    "BackendConfig",
    "Config",
    "ConfigLayer",
    "ConfigSection",
    "Effect",
    "Floor",
    "HooksConfig",
    "LayerKind",
    "Match",
    "ModelConfig",
    "Predicate",
    "Rule",
    "RuleExamples",
    "SecretRef",
    "Selection",
    "SessionsConfig",
    "SkillsConfig",
    "ToolsConfig",
    "VarDefinition",
    "VarSource",
    "load_config",
    "parse_config",
    "read_config_bytes",
]

DEFAULT_MAX_STEPS: Final = 50
DEFAULT_MAX_OUTPUT_BYTES: Final = 8192
DEFAULT_HANDLER_TIMEOUT_MS: Final = 600_000
DEFAULT_COMPACT_THRESHOLD: Final = 0.8
"""The share of a model's context window past which raw compacts a session."""
MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024


@attrs.frozen(kw_only=True)
class ToolsConfig:
    """An agent's tool selection (``use``, in order) and its policy (``rules``)."""

    use: tuple[str, ...]
    rules: tuple[Rule, ...] = ()


@attrs.frozen(kw_only=True)
class SecretRef:
    """Where a credential comes from: an environment variable (``{"env": "NAME"}``) or a
    config variable (``{"var": "NAME"}``). The value itself is never written in the config,
    the session store, logs or history."""

    env: str | None = attrs.field(default=None, validator=check_env_name)
    var: str | None = None

    def __attrs_post_init__(self) -> None:
        if (self.env is None) == (self.var is None):
            raise ValueError('expected exactly one of "env" and "var"')


@attrs.frozen(kw_only=True)
class ModelConfig:
    """A model definition. ``provider`` names a provider (``openai``, ``anthropic``, or one
    a plug-in registers); ``api`` picks the OpenAI API (``chat`` completions, the default,
    or ``responses``); ``vision`` says the model accepts images. ``context_window`` is how
    many tokens one request may hold (unset: raw never compacts on its own), and
    ``compact_threshold`` the share of it past which raw compacts the session before the
    next request (default 0.8)."""

    provider: str
    model: str
    base_url: str | None = None
    api_key: SecretRef | None = None
    api: Literal["chat", "responses"] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    vision: bool = False
    context_window: int | None = None
    compact_threshold: float = DEFAULT_COMPACT_THRESHOLD


@attrs.frozen(kw_only=True)
class VarSource:
    """Where a variable's value is read from, when it is needed: an environment variable, a
    file (its text, without a final newline), or a command's standard output (run without a
    shell, with a timeout)."""

    env: str | None = attrs.field(default=None, validator=check_env_name)
    file: str | None = attrs.field(default=None, validator=check_file)
    command: tuple[str, ...] | None = attrs.field(default=None, validator=check_command)
    timeout_ms: int = 10_000

    def __attrs_post_init__(self) -> None:
        given = [k for k in ("env", "file", "command") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError('expected exactly one of "env", "file" and "command"')
        if self.command is None and self.timeout_ms != 10_000:
            raise FieldValueError("timeout_ms", "timeout_ms applies to a command only")


@attrs.frozen(kw_only=True)
class VarDefinition:
    """A runtime variable: what it is for (``description``, shown to the model) and where its
    value comes from (``from`` in the file)."""

    description: str
    source: VarSource


@attrs.frozen(kw_only=True)
class SkillsConfig:
    """Folders that hold skill folders (``<path>/<skill>/SKILL.md``), relative to the
    config file's folder unless absolute."""

    paths: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class BackendConfig:
    """``sessions.backend``: which session backend stores the sessions, and its options.

    ``type`` is ``sqlite`` (raw's own, the default) or the name of a backend a plug-in
    registers (``raw_register_session_backends``); ``options`` are the object's other keys,
    frozen. SQLite takes one option, ``directory`` (a string: where its files live).
    """

    type: str = "sqlite"
    options: Mapping[str, Any] = attrs.field(factory=FrozenDict)


@attrs.frozen(kw_only=True)
class SessionsConfig:
    """Session settings: expiry and the backend that stores them."""

    expire_after_days: float = 30
    backend: BackendConfig = attrs.field(factory=BackendConfig)


@attrs.frozen(kw_only=True)
class ConfigSection:
    """A top-level config key a plug-in claims (``raw_register_config_sections``).

    ``validate(value, field)`` gets the key's JSON value and its path (``$.<name>``); it
    returns the parsed value, which :attr:`Config.sections` then holds, or raises
    :class:`raw_core.errors.ConfigInvalid` with a ``field`` below ``$.<name>``. Any other
    exception is reported as a ``config_invalid`` naming the plug-in.
    """

    name: str
    validate: Callable[[Any, str], Any]


@attrs.frozen(kw_only=True)
class Selection:
    """``{"use": [...]}``: the names an agent selects, in order."""

    use: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class AgentConfig:
    """One agent: its model, system prompt, tools, skills, variables, command hooks and
    limits."""

    tools: ToolsConfig
    model: str | None = None
    system: str | None = None
    skills: Selection = attrs.field(factory=Selection)
    vars: Selection = attrs.field(factory=Selection)
    hooks: HooksConfig = attrs.field(factory=HooksConfig)
    max_steps: int = DEFAULT_MAX_STEPS
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    handler_timeout_ms: int = DEFAULT_HANDLER_TIMEOUT_MS


def _read_only(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _own_floor(config: Config) -> tuple[Floor, ...]:
    if not config.rules:
        return ()
    return (Floor(layer="config", rules=config.rules, path=config.path),)


def _own_layer(config: Config) -> tuple[ConfigLayer, ...]:
    return (ConfigLayer(kind="config", path=config.path),) if config.path is not None else ()


@attrs.frozen(kw_only=True)
class Config:
    """A loaded config: one file, or the layers composed (:mod:`raw_core.config.layers`).
    ``path`` is the file the agents come from (``tools/`` beside it holds the ``agent/``
    tools).

    ``rules`` are the file's own top-level rules; ``floors`` the floors every agent's
    rules are composed with (by default the file's own ``rules``, when it has any);
    ``layers`` the files in use (by default this one)."""

    agents: Mapping[str, AgentConfig] = attrs.field(factory=dict)
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    vars: Mapping[str, VarDefinition] = attrs.field(factory=dict)
    skills: SkillsConfig = attrs.field(factory=SkillsConfig)
    sessions: SessionsConfig = attrs.field(factory=SessionsConfig)
    default_agent: str | None = None
    path: Path | None = None
    sections: Mapping[str, Any] = attrs.field(factory=dict, converter=_read_only)
    """Plug-in sections present in the file: key → what its validator returned."""
    rules: tuple[Rule, ...] = ()
    floors: tuple[Floor, ...] = attrs.field(default=attrs.Factory(_own_floor, takes_self=True))
    layers: tuple[ConfigLayer, ...] = attrs.field(
        default=attrs.Factory(_own_layer, takes_self=True)
    )
    unused: tuple[str, ...] = ()
    """What a composition left out, for people: a project's definition a user's replaces,
    or a project's ``sessions`` when the user's config provides them."""

    @property
    def directory(self) -> Path | None:
        """The folder the config file is in."""
        return self.path.parent if self.path is not None else None

    def resolve_agent(self, name: str | None = None) -> tuple[str, AgentConfig]:
        """The agent to use: ``name``, else ``default_agent``, else the only one."""
        chosen = name or self.default_agent
        # The agents come from this file (the project's, --config's or the user's).
        where = {"path": str(self.path)} if self.path is not None else {}
        if chosen is None and not self.agents:
            files = ", ".join(str(layer.path) for layer in self.layers) or "the config"
            raise ConfigInvalid(f"no agent is defined (in {files})", field="$.agents", **where)
        if chosen is None:
            if len(self.agents) == 1:
                chosen = next(iter(self.agents))
            else:
                names = ", ".join(sorted(self.agents)) or "none"
                raise ConfigInvalid(
                    f"the config defines several agents ({names}); choose one with --agent"
                    " or set default_agent",
                    field="$.agents",
                    **where,
                )
        agent = self.agents.get(chosen)
        if agent is None:
            names = ", ".join(sorted(self.agents)) or "none"
            raise ConfigInvalid(
                f"no agent named {chosen!r}; the config defines: {names}",
                field="$.agents",
                **where,
            )
        return chosen, agent


@attrs.frozen(kw_only=True)
class _ConfigFile:
    agents: Mapping[str, AgentConfig] = attrs.field(factory=dict)
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    vars: Mapping[str, VarDefinition] = attrs.field(factory=dict)
    skills: SkillsConfig = attrs.field(factory=SkillsConfig)
    sessions: SessionsConfig = attrs.field(factory=SessionsConfig)
    default_agent: str | None = None
    rules: tuple[Rule, ...] = ()


CORE_SECTIONS: Final = frozenset(f.name for f in attrs.fields(_ConfigFile))
"""The top-level keys raw's own config owns; no plug-in may claim them."""


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

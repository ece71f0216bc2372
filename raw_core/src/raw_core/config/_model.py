"""The config file's records, one for every section (:mod:`raw_core.config._reading`
reads and checks a file into them, with JSON paths in errors).

A first version that covers what raw uses today: agents (model, system prompt, tools.use,
tools.rules, max_steps, max_output_bytes, handler_timeout_ms), model definitions and
``default_agent``. Every key is validated and unknown keys are rejected, with the JSON path
of the field in the error. Deeper checks that need the selected tools (a rule's predicate
against a tool's schema) happen when the agent's tools are loaded.

raw validates the keys it owns (:data:`CORE_SECTIONS`). A plug-in claims another top-level
key with a :class:`ConfigSection` (``raw_register_config_sections``); given a plug-in host,
:func:`~raw_core.config.parse_config` hands the key's value to the plug-in's validator
and keeps what it returns in :attr:`Config.sections`. A key nobody claims is still
``config_invalid``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

import attrs

from raw_core._convert import (
    FieldValueError,
)
from raw_core.config._checks import (
    SQLITE_OPTIONS,
)
from raw_core.config._hooks import (
    DEFAULT_HOOK_TIMEOUT_MS,
    MAX_HOOK_TIMEOUT_MS,
    HooksConfig,
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
)
from raw_core.config._vars import check_command, check_env_name, check_file
from raw_core.errors import ConfigInvalid
from raw_core.frozen import FrozenDict

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

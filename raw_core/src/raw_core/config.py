"""The config file: records for every section, and loading with JSON paths in errors.

A first version that covers what raw uses today: agents (model, system prompt, tools.use,
tools.rules, max_steps, max_output_bytes), model definitions and ``default_agent``. Every
key is validated and unknown keys are rejected, with the JSON path of the field in the
error. Deeper checks that need the selected tools (a rule's predicate against a tool's
schema) happen when the agent's tools are loaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from raw_core._convert import FieldValueError, StructureFailed, make_converter, structure
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import ConfigInvalid, ConfigNotFound
from raw_core.identity import parse_identity

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STEPS",
    "AgentConfig",
    "Config",
    "ModelConfig",
    "SecretRef",
    "Predicate",
    "Rule",
    "ToolsConfig",
    "load_config",
    "parse_config",
]

DEFAULT_MAX_STEPS: Final = 50
DEFAULT_MAX_OUTPUT_BYTES: Final = 8192
MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024

Effect = Literal["allow", "ask", "deny"]


def _positive(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 1:
        raise FieldValueError(attribute.name, f"expected a positive integer, found {value}")


def _identities(_instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    for index, text in enumerate(value):
        try:
            parse_identity(text)
        except ValueError as exc:
            raise FieldValueError(f"{attribute.name}[{index}]", str(exc)) from None


@attrs.frozen(kw_only=True)
class Predicate:
    """``{source, any, regex}``: does any string at path ``any`` of ``source`` match?"""

    source: Literal["arguments", "effects"]
    any: str
    regex: str


@attrs.frozen(kw_only=True)
class Rule:
    """One entry of ``tools.rules``: a glob over identities, an effect, an optional ``when``."""

    match: str
    effect: Effect
    when: Predicate | None = None

    def __attrs_post_init__(self) -> None:
        if self.when is not None and self.effect != "ask":
            raise FieldValueError(
                "when", f"'when' is only valid with effect 'ask', found effect {self.effect!r}"
            )


@attrs.frozen(kw_only=True)
class ToolsConfig:
    """An agent's tool selection (``use``, in order) and its policy (``rules``)."""

    use: tuple[str, ...] = attrs.field(validator=_identities)
    rules: tuple[Rule, ...] = ()


@attrs.frozen(kw_only=True)
class SecretRef:
    """Where a credential comes from: an environment variable (``{"env": "NAME"}``) or a
    config variable (``{"var": "NAME"}``). The value itself is never written in the config,
    the session store, logs or history."""

    env: str | None = None
    var: str | None = None

    def __attrs_post_init__(self) -> None:
        if (self.env is None) == (self.var is None):
            raise ValueError('expected exactly one of "env" and "var"')


def _temperature(_instance: Any, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not 0 <= value <= 2:
        raise FieldValueError(attribute.name, f"expected a number from 0 to 2, found {value}")


def _optional_positive(_instance: Any, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 1:
        raise FieldValueError(attribute.name, f"expected a positive integer, found {value}")


@attrs.frozen(kw_only=True)
class ModelConfig:
    """A model definition. ``provider`` names a provider (``openai``, ``anthropic``, or one
    a plug-in registers); ``api`` picks the OpenAI API (``chat`` completions, the default,
    or ``responses``); ``vision`` says the model accepts images."""

    provider: str
    model: str
    base_url: str | None = None
    api_key: SecretRef | None = None
    api: Literal["chat", "responses"] | None = None
    max_tokens: int | None = attrs.field(default=None, validator=_optional_positive)
    temperature: float | None = attrs.field(default=None, validator=_temperature)
    vision: bool = False


@attrs.frozen(kw_only=True)
class AgentConfig:
    """One agent: its model, system prompt, tools and limits."""

    tools: ToolsConfig
    model: str | None = None
    system: str | None = None
    max_steps: int = attrs.field(default=DEFAULT_MAX_STEPS, validator=_positive)
    max_output_bytes: int = attrs.field(default=DEFAULT_MAX_OUTPUT_BYTES, validator=_positive)


@attrs.frozen(kw_only=True)
class Config:
    """A loaded config file. ``path`` is where it was read from (``tools/`` beside it holds
    the ``agent/`` tools)."""

    agents: Mapping[str, AgentConfig]
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    default_agent: str | None = None
    path: Path | None = None

    @property
    def directory(self) -> Path | None:
        """The folder the config file is in."""
        return self.path.parent if self.path is not None else None

    def resolve_agent(self, name: str | None = None) -> tuple[str, AgentConfig]:
        """The agent to use: ``name``, else ``default_agent``, else the only one."""
        chosen = name or self.default_agent
        if chosen is None:
            if len(self.agents) == 1:
                chosen = next(iter(self.agents))
            else:
                names = ", ".join(sorted(self.agents)) or "none"
                raise ConfigInvalid(
                    f"the config defines several agents ({names}); choose one with --agent"
                    " or set default_agent",
                    field="$.agents",
                )
        agent = self.agents.get(chosen)
        if agent is None:
            names = ", ".join(sorted(self.agents)) or "none"
            raise ConfigInvalid(
                f"no agent named {chosen!r}; the config defines: {names}", field="$.agents"
            )
        return chosen, agent


@attrs.frozen(kw_only=True)
class _ConfigFile:
    agents: Mapping[str, AgentConfig]
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    default_agent: str | None = None


_CONVERTER: Final = make_converter()


def parse_config(text: str | bytes, *, path: Path | None = None) -> Config:
    """Parse and check the text of a config file; every error names its JSON path."""
    where = str(path) if path is not None else "config"
    try:
        data = loads_strict(text, max_bytes=MAX_CONFIG_BYTES)
    except JsonInputError as exc:
        raise ConfigInvalid(f"{where} is not valid JSON: {exc}", field="$", path=where) from None
    try:
        parsed = structure(_CONVERTER, data, _ConfigFile)
    except StructureFailed as exc:
        first = exc.problems[0]
        error = ConfigInvalid(first.message, field=first.path, path=where)
        error.context["problems"] = [attrs.asdict(p) for p in exc.problems]
        raise error from None
    _check_references(parsed, where)
    return Config(
        agents=parsed.agents, models=parsed.models, default_agent=parsed.default_agent, path=path
    )


def _check_references(parsed: _ConfigFile, where: str) -> None:
    if parsed.default_agent is not None and parsed.default_agent not in parsed.agents:
        raise ConfigInvalid(
            f"default_agent names {parsed.default_agent!r}, which is not an agent of this config",
            field="$.default_agent",
            path=where,
        )
    for name, agent in parsed.agents.items():
        if agent.model is not None and agent.model not in parsed.models:
            known = ", ".join(sorted(parsed.models)) or "none"
            raise ConfigInvalid(
                f"model {agent.model!r} is not defined in models (defined: {known})",
                field=f"$.agents.{name}.model",
                path=where,
            )


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and check the config file at ``path``."""
    file = Path(os.path.abspath(path))
    try:
        text = file.read_bytes()
    except FileNotFoundError:
        raise ConfigNotFound(f"no config file at {file}", path=str(file)) from None
    except OSError as exc:
        raise ConfigNotFound(f"cannot read {file}: {exc.strerror}", path=str(file)) from None
    return parse_config(text, path=file)

"""The config file: records for every section, and loading with JSON paths in errors.

A first version that covers what raw uses today: agents (model, system prompt, tools.use,
tools.rules, max_steps, max_output_bytes, handler_timeout_ms), model definitions and
``default_agent``. Every key is validated and unknown keys are rejected, with the JSON path
of the field in the error. Deeper checks that need the selected tools (a rule's predicate
against a tool's schema) happen when the agent's tools are loaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from raw_core._convert import (
    FieldProblem,
    FieldValueError,
    StructureFailed,
    make_converter,
    structure,
)
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import ConfigInvalid, ConfigNotFound
from raw_core.identity import parse_identity

__all__ = [
    "DEFAULT_HANDLER_TIMEOUT_MS",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STEPS",
    "AgentConfig",
    "Config",
    "ModelConfig",
    "Predicate",
    "Rule",
    "SecretRef",
    "Selection",
    "SessionsConfig",
    "SkillsConfig",
    "ToolsConfig",
    "VarDefinition",
    "VarSource",
    "load_config",
    "parse_config",
]

DEFAULT_MAX_STEPS: Final = 50
DEFAULT_MAX_OUTPUT_BYTES: Final = 8192
DEFAULT_HANDLER_TIMEOUT_MS: Final = 600_000
MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024
MAX_EXPIRY_DAYS: Final = 36_500  # a century: past that, dates overflow
MAX_VAR_TIMEOUT_MS: Final = 600_000  # ten minutes, as for a bash command
_VAR_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Effect = Literal["allow", "ask", "deny"]


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

    use: tuple[str, ...]
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
    max_tokens: int | None = None
    temperature: float | None = None
    vision: bool = False


@attrs.frozen(kw_only=True)
class VarSource:
    """Where a variable's value is read from, when it is needed: an environment variable, a
    file (its text, without a final newline), or a command's standard output (run without a
    shell, with a timeout)."""

    env: str | None = None
    file: str | None = None
    command: tuple[str, ...] | None = None
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
class SessionsConfig:
    """Session store settings."""

    expire_after_days: float = 30


@attrs.frozen(kw_only=True)
class Selection:
    """``{"use": [...]}``: the names an agent selects, in order."""

    use: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class AgentConfig:
    """One agent: its model, system prompt, tools, skills, variables and limits."""

    tools: ToolsConfig
    model: str | None = None
    system: str | None = None
    skills: Selection = attrs.field(factory=Selection)
    vars: Selection = attrs.field(factory=Selection)
    max_steps: int = DEFAULT_MAX_STEPS
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    handler_timeout_ms: int = DEFAULT_HANDLER_TIMEOUT_MS


@attrs.frozen(kw_only=True)
class Config:
    """A loaded config file. ``path`` is where it was read from (``tools/`` beside it holds
    the ``agent/`` tools)."""

    agents: Mapping[str, AgentConfig]
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    vars: Mapping[str, VarDefinition] = attrs.field(factory=dict)
    skills: SkillsConfig = attrs.field(factory=SkillsConfig)
    sessions: SessionsConfig = attrs.field(factory=SessionsConfig)
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
    vars: Mapping[str, VarDefinition] = attrs.field(factory=dict)
    skills: SkillsConfig = attrs.field(factory=SkillsConfig)
    sessions: SessionsConfig = attrs.field(factory=SessionsConfig)
    default_agent: str | None = None


def _make_converter() -> cattrs.Converter:
    converter = make_converter()
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


def parse_config(text: str | bytes, *, path: Path | None = None) -> Config:
    """Parse and check the text of a config file; every error names its JSON path.

    The error raised is the first problem; ``error.context["problems"]`` lists every one
    (``raw config validate`` prints them all).
    """
    where = str(path) if path is not None else "config"
    try:
        data = loads_strict(text, max_bytes=MAX_CONFIG_BYTES)
    except JsonInputError as exc:
        raise ConfigInvalid(f"{where} is not valid JSON: {exc}", field="$", path=where) from None
    try:
        parsed = structure(_CONVERTER, data, _ConfigFile)
    except StructureFailed as exc:
        raise _invalid(exc.problems, where) from None
    problems = _value_problems(parsed) + _reference_problems(parsed)
    if problems:
        raise _invalid(problems, where)
    return Config(
        agents=parsed.agents,
        models=parsed.models,
        vars=parsed.vars,
        skills=parsed.skills,
        sessions=parsed.sessions,
        default_agent=parsed.default_agent,
        path=path,
    )


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


def _value_problems(parsed: _ConfigFile) -> list[FieldProblem]:
    """Rules on values, checked once every field has its type, so that all of them are
    reported together (a record's validator would stop at its first)."""
    found: list[FieldProblem] = []

    def positive(path: str, value: float | None, what: str = "a positive integer") -> None:
        if value is not None and not value > 0:
            found.append(FieldProblem(path=path, message=f"expected {what}, found {value}"))

    for name, model in parsed.models.items():
        positive(f"$.models.{name}.max_tokens", model.max_tokens)
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


def _reference_problems(parsed: _ConfigFile) -> list[FieldProblem]:
    """Names that must refer to something the file defines."""
    found: list[FieldProblem] = []
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
            and (model.api_key.var not in parsed.vars)
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
                    path=f"$.vars[{name!r}]",
                    message="expected a variable name (letters, digits"
                    " and _, not starting with a digit)",
                )
            )
    for name, agent in parsed.agents.items():
        if agent.model is not None and agent.model not in parsed.models:
            known = ", ".join(sorted(parsed.models)) or "none"
            found.append(
                FieldProblem(
                    path=f"$.agents.{name}.model",
                    message=f"model {agent.model!r} is not defined in models (defined: {known})",
                )
            )
        for index, var in enumerate(agent.vars.use):
            if var not in parsed.vars:
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

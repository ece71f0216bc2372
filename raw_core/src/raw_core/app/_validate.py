"""``raw config validate``: every problem the config files in use hold, at once.

A command stops at the first problem it meets; a check goes on. Each layer's file is checked
even when another one is broken (:func:`~raw_core.config.layers.check_layers`); each agent's
tool and skill entries are loaded one by one (:func:`~raw_core.agent.agent_problems`), also
when the files had wrong values or references; and each model an agent names is checked as
a turn would make its provider — an installed provider, the fields it requires — without
reading a credential, making a provider or sending anything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from raw_core.errors import PluginInvalid, RawError
from raw_core.runtime.models import provider_record

if TYPE_CHECKING:
    from raw_core.config import Config, ConfigLayer, LayerKind
    from raw_core.plugins import PluginHost

__all__ = ["ConfigReport", "validate_config"]


@attrs.frozen(kw_only=True)
class ConfigReport:
    """What :func:`validate_config` found: the project's (or else the user's) config file
    ``path``, the ``files`` in use with their layers, every ``problem`` (a config error
    lists its file's problems in ``context["problems"]``), and ``notes`` for people (a
    project definition the user's config replaces, a tool's loading warning)."""

    path: Path | None
    files: tuple[ConfigLayer, ...]
    problems: tuple[RawError, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether the config holds no problem."""
        return not self.problems


async def validate_config(
    config: str | os.PathLike[str] | None = None, *, host: PluginHost | None = None
) -> ConfigReport:
    """Check the config files in use (``config``: a project config file, as
    :meth:`App.open <raw_core.app.App.open>` takes it; None for the ones found) and every
    agent in them; return every problem rather than raise. ``host``: the plug-in host
    (default: one with the installed plug-ins loaded)."""
    from raw_core.config import ConfigLayer
    from raw_core.config.layers import check_layers, find_layers
    from raw_core.plugins import PluginHost

    problems: list[RawError] = []
    try:
        if host is None:
            host = PluginHost()
            host.load_entry_points()
        files = find_layers(config)
    except RawError as exc:
        path = exc.context.get("path")
        return ConfigReport(
            path=Path(path) if isinstance(path, str) else None,
            files=(),
            problems=(exc,),
            notes=(),
        )
    composed, problems = check_layers(files, host=host)
    if composed is None:
        layers: tuple[tuple[LayerKind, Path | None], ...] = (
            ("managed", files.managed),
            ("user", files.user),
            ("project", files.project),
        )
        found = tuple(
            ConfigLayer(kind=kind, path=path) for kind, path in layers if path is not None
        )
        return ConfigReport(
            path=files.project or files.user, files=found, problems=tuple(problems), notes=()
        )
    notes = list(composed.unused)
    # The fields a file's check reported: an agent's load problem at one of them (a
    # malformed tool identity is both) is left out.
    seen = {e.field for e in problems if e.field is not None} | {
        p["path"] for e in problems for p in e.context.get("problems", ())
    }
    problems += _model_problems(composed, host)
    problems += await _agents(composed, host, notes, seen)
    return ConfigReport(
        path=composed.path,
        files=composed.layers,
        problems=_once_each(problems),
        notes=tuple(notes),
    )


def _once_each(problems: list[RawError]) -> tuple[RawError, ...]:
    """``problems`` with each reported once: a floor's problem is met by every agent its
    rules are bound for, and is the same problem each time."""
    found: dict[str, RawError] = {}
    for problem in problems:
        key = json.dumps(
            [problem.code, problem.message, problem.context], sort_keys=True, default=repr
        )
        found.setdefault(key, problem)
    return tuple(found.values())


async def _agents(
    config: Config, host: PluginHost, notes: list[str], seen: set[str]
) -> list[RawError]:
    """Each agent's load problems (those at a field a file's check already reported left
    out: a malformed identity is both), and its tools' warnings added to ``notes``."""
    from raw_core.agent import agent_problems
    from raw_core.app._listing import tool_warnings
    from raw_core.tools.loader import ToolLoader

    loader = ToolLoader()
    found: list[RawError] = []
    for name in config.agents:
        loaded, failed = await agent_problems(config, name, host=host, loader=loader)
        for error in failed:
            if error.field is None:
                error.context["field"] = f"$.agents.{name}"
            if error.field not in seen:
                found.append(error)
        if loaded is not None:
            notes.extend(
                f"agent {name}: {identity}: {warning}"
                for identity, said in tool_warnings(loaded).items()
                for warning in said
            )
    return found


def _model_problems(config: Config, host: PluginHost) -> list[RawError]:
    """The models the agents name, checked as a turn would make their providers (see
    :func:`raw_core.runtime.models.make_provider`) short of reading the credential or
    making the provider: the provider must be installed, and its record's ``check`` (what
    its factory refuses from the model's config alone: an ``api_key`` or a ``base_url``
    it needs) must pass, with the code and field a turn gets."""
    found: list[RawError] = []
    named = dict.fromkeys(a.model for a in config.agents.values() if a.model is not None)
    for name in named:
        model = config.models.get(name)
        if model is None:  # a reference problem, reported with the file's
            continue
        try:
            record = provider_record(host, model, name=name)
            if record.check is not None:
                record.check(model)
        except RawError as error:
            if error.field is None:
                error.context["field"] = f"$.models.{name}"
            found.append(error)
        except Exception as exc:  # a plug-in's check that fails: named, never a traceback
            found.append(
                PluginInvalid(
                    f"the {model.provider!r} provider's check of model {name!r} failed:"
                    f" {type(exc).__name__}: {exc}",
                    provider=model.provider,
                    field=f"$.models.{name}",
                )
            )
    return found

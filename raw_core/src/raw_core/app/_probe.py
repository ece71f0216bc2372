"""The config's models: ``describe_models`` (each one and its credential's state),
``check_model`` (one tiny streamed request, and what worked) and ``agent_provider`` (the
provider an agent's model names)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import attrs

from raw_core.errors import (
    ConfigInvalid,
    ConfigNotFound,
    ProviderUnavailable,
    RawError,
    VarUnavailable,
)
from raw_core.providers.contract import (
    ModelRequest,
    Provider,
    StopEvent,
    TextDelta,
    UsageEvent,
    prompt_cache_key,
)
from raw_core.sessions.messages import UserMessage

if TYPE_CHECKING:
    from pathlib import Path

    from raw_core.agent import Agent
    from raw_core.agent.variables import VarCache
    from raw_core.config import Config
    from raw_core.plugins import PluginHost

__all__ = [
    "CHECK_PROMPT",
    "CHECK_SYSTEM",
    "ModelCheck",
    "agent_provider",
    "check_model",
    "describe_models",
    "field_file",
    "probe_model",
]

CHECK_SYSTEM: Final = "You are a connectivity check. Answer with the single word: ok"
CHECK_PROMPT: Final = "Reply with the single word ok."


@attrs.frozen(kw_only=True)
class ModelCheck:
    """What one check request showed: ``ok`` when a complete answer arrived; the streamed
    ``text`` and its number of ``fragments``, ``stop_reason``, ``usage`` (token counts or
    None), seconds to the first event and in all, and the ``error`` (``{code, message,
    ...}``) when it failed."""

    ok: bool
    text: str
    fragments: int
    stop_reason: str | None
    usage: dict[str, int] | None
    first_event_seconds: float | None
    seconds: float
    error: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``raw models check --json`` adds the model's description)."""
        return attrs.asdict(self)


async def probe_model(provider: Provider, seconds: float) -> ModelCheck:
    """Stream one request through ``provider`` within ``seconds``; never raises for a
    failed request (it is reported). The provider is closed at the end."""
    request = ModelRequest(
        system=CHECK_SYSTEM,
        tools=(),
        messages=(UserMessage.from_text(CHECK_PROMPT),),
        cache_key=prompt_cache_key(CHECK_SYSTEM, ()),
    )
    text: list[str] = []
    usage: dict[str, int] | None = None
    stop: str | None = None
    error: dict[str, Any] | None = None
    started = time.monotonic()
    first: float | None = None
    stream = provider.stream(request)
    try:
        with anyio.fail_after(seconds):
            async for event in stream:
                if first is None:
                    first = time.monotonic() - started
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, UsageEvent):
                    usage = {
                        "input_tokens": event.input_tokens,
                        "output_tokens": event.output_tokens,
                        "cache_read_tokens": event.cache_read_tokens,
                        "cache_write_tokens": event.cache_write_tokens,
                    }
                elif isinstance(event, StopEvent):
                    stop = event.reason
    except TimeoutError:
        failure = ProviderUnavailable(
            f"no complete answer within {seconds:g} s", provider=provider.name
        )
        error = failure.to_dict()
    except RawError as exc:
        error = exc.to_dict()
    except Exception as exc:  # a provider that raises something else: its type only
        error = {"code": "provider_error", "message": f"the provider failed: {type(exc).__name__}"}
    finally:
        with anyio.CancelScope(shield=True):
            end = getattr(stream, "aclose", None)
            if end is not None:
                await end()
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()
    if error is None and stop is None:
        error = {"code": "provider_error", "message": "the stream ended without a stop reason"}
    return ModelCheck(
        ok=error is None,
        text="".join(text),
        fragments=len(text),
        stop_reason=stop,
        usage=usage,
        first_event_seconds=round(first, 3) if first is not None else None,
        seconds=round(time.monotonic() - started, 3),
        error=error,
    )


def describe_models(config: Config, host: PluginHost) -> list[dict[str, Any]]:
    """The config's models, by name, as :meth:`raw_core.app.App.describe_models` lists
    them: provider (and whether a plug-in provides it), model, address, API, vision, and
    where the credential comes from and whether it is there — never its value."""
    from raw_core.runtime.models import credential_status

    providers = host.providers()
    rows = []
    for name, model in sorted(config.models.items()):
        status = credential_status(model, vars=config.vars, base_dir=config.directory)
        rows.append(
            {
                "name": name,
                "provider": model.provider,
                "provider_installed": model.provider in providers,
                "model": model.model,
                "base_url": model.base_url,
                "api": model.api,
                "vision": model.vision,
                "credential": {"source": status.source, "state": status.state},
            }
        )
    return rows


async def check_model(
    config: Config, host: PluginHost, name: str, seconds: float, var_cache: VarCache | None = None
) -> ModelCheck:
    """:func:`probe_model` on the config's model ``name`` (its credential read through
    ``var_cache``); ``config_invalid`` for an unknown model."""
    from raw_core.agent.variables import VarService
    from raw_core.runtime.models import make_provider

    model = config.models.get(name)
    if model is None:
        known = ", ".join(sorted(config.models)) or "none"
        raise ConfigInvalid(
            f"no model named {name!r}; the config defines: {known}",
            field="$.models",
            path=field_file(config, "$.models"),
        )
    variables = VarService(config.vars, (), base_dir=config.directory, cache=var_cache)
    with credential_source(config, name):
        provider = make_provider(host, model, name=name, resolve_var=variables.read_defined)
    return await probe_model(provider, seconds)


def agent_provider(config: Config, host: PluginHost, agent: Agent) -> Provider:
    """The provider of the model agent ``agent`` names (its credential resolved through
    the agent's variables); ``config_invalid`` when it names none."""
    from raw_core.runtime.models import make_provider

    model_name = agent.config.model
    if model_name is None:
        raise ConfigInvalid(
            f"agent {agent.name!r} has no model: set agents.{agent.name}.model to one of models",
            field=f"$.agents.{agent.name}.model",
            path=field_file(config, "$.agents"),
        )
    with credential_source(config, model_name):
        return make_provider(
            host,
            config.models[model_name],
            name=model_name,
            resolve_var=agent.vars.read_defined,
        )


@contextmanager
def credential_source(config: Config, model_name: str) -> Iterator[None]:
    """A ``var_unavailable`` raised in the block for model ``model_name``'s credential
    variable gets what a hint needs (never a value): ``field``, the model's ``api_key``,
    and ``source``, where the variable's definition reads it from (``env`` with the
    environment variable's name, ``file`` with the path, or ``command``)."""
    try:
        yield
    except (ConfigInvalid, ConfigNotFound) as exc:
        # A credential or provider problem of the model: the file that defines it.
        if "path" not in exc.context:
            where = field_file(config, exc.field or f"$.models.{model_name}")
            if where is not None:
                exc.context["path"] = where
        raise
    except VarUnavailable as exc:
        model = config.models.get(model_name)
        var = model.api_key.var if model is not None and model.api_key is not None else None
        definition = config.vars.get(var) if var is not None else None
        if definition is not None and exc.context.get("var") == var:
            origin = definition.source
            exc.context.setdefault("field", f"$.models.{model_name}.api_key")
            if origin.env is not None:
                exc.context.update(source="env", env=origin.env)
            elif origin.file is not None:
                exc.context.update(source="file", file=origin.file)
            else:
                exc.context.update(source="command")
        raise


def field_file(config: Config, field: str) -> str | None:
    """The file among ``config``'s layers that defines ``field`` (a JSON path), for an
    error found after loading: a model, variable or ``sessions`` from the user's config
    when it defines them (it wins over the project's), anything else from the file the
    agents come from. Read again only on this error path; None when nothing is known."""
    import re

    section = re.match(r"^\$\.(models|vars|sessions)\b(?:\.([A-Za-z0-9_-]+))?", field)
    if section is not None:
        kind, name = section.group(1), section.group(2)
        for layer in config.layers:
            if layer.kind == "user" and layer.path and _defines(layer.path, kind, name):
                return str(layer.path)
    if config.path is not None:
        return str(config.path)
    paths = [layer.path for layer in config.layers if layer.path is not None]
    return str(paths[-1]) if paths else None


def _defines(path: Path, section: str, name: str | None) -> bool:
    """Whether the JSON file at ``path`` has ``section`` (and ``name`` in it)."""
    import json

    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    value = data.get(section) if isinstance(data, dict) else None
    if value is None:
        return False
    return name is None or (isinstance(value, dict) and name in value)

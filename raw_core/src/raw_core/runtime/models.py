"""From a model definition to a provider: find its provider, resolve its credential.

The credential of a :class:`~raw_core.config.ModelConfig` is a
:class:`~raw_core.config.SecretRef`: an environment variable (read from ``environ``) or a
config variable (read through the ``resolve_var`` callback the caller supplies). The value
is handed to the provider's factory and nowhere else: it is not logged, not put in an
error, and never stored. No SDK is imported here; providers come from plug-ins
(``raw_register_providers``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from raw_core.config import ModelConfig, SecretRef, VarDefinition
from raw_core.errors import ConfigInvalid, PluginInvalid, RawError
from raw_core.plugins import PluginHost
from raw_core.providers.contract import Provider, ProviderRecord

__all__ = [
    "CredentialStatus",
    "credential_status",
    "make_provider",
    "provider_record",
    "resolve_credential",
]

VarResolver = Callable[[str], str]


@attrs.frozen(kw_only=True)
class CredentialStatus:
    """Whether a model's credential is available, without its value.

    ``state`` is ``none`` (the model names no credential), ``set``, ``missing`` (unset or
    empty, or a variable the config does not define) or ``unchecked`` (a variable read by a
    command, which is not run just to look). ``source`` says where it comes from
    (``env:NAME``, ``var:NAME (file:PATH)``...).
    """

    state: Literal["none", "set", "missing", "unchecked"]
    source: str | None = None


def _source(ref: SecretRef) -> str:
    return f"env:{ref.env}" if ref.env is not None else f"var:{ref.var}"


def credential_status(
    model: ModelConfig,
    *,
    environ: Mapping[str, str] = os.environ,
    vars: Mapping[str, VarDefinition] | None = None,
    base_dir: Path | None = None,
) -> CredentialStatus:
    """Where ``model``'s credential comes from and whether it is there, without reading a
    value: an environment variable is looked up, a config variable read from the environment
    or a file is followed to it (``vars``: the config's definitions; ``base_dir``: the
    config's folder); a variable read from a command stays ``unchecked`` (nothing is run)."""
    ref = model.api_key
    if ref is None:
        return CredentialStatus(state="none")
    source = _source(ref)
    if ref.env is not None:
        return CredentialStatus(state="set" if environ.get(ref.env) else "missing", source=source)
    definition = (vars or {}).get(ref.var or "")
    if definition is None:
        return CredentialStatus(state="missing" if vars is not None else "unchecked", source=source)
    origin = definition.source
    if origin.env is not None:
        state: Literal["set", "missing"] = "set" if environ.get(origin.env) else "missing"
        return CredentialStatus(state=state, source=f"{source} (env:{origin.env})")
    if origin.file is not None:
        path = Path(origin.file).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return CredentialStatus(
            state="set" if path.is_file() else "missing", source=f"{source} (file:{origin.file})"
        )
    return CredentialStatus(state="unchecked", source=f"{source} (command)")


def resolve_credential(
    model: ModelConfig,
    *,
    name: str | None = None,
    environ: Mapping[str, str] = os.environ,
    resolve_var: VarResolver | None = None,
) -> str | None:
    """The value of ``model``'s credential, or None when it names none.

    Raises ``config_invalid`` (field ``$.models.<name>.api_key``) when the environment
    variable is unset or empty, or when a config variable is named and no resolver given.
    """
    ref = model.api_key
    if ref is None:
        return None
    field = f"$.models.{name}.api_key" if name is not None else None
    label = f"model {name!r}" if name is not None else f"model {model.model!r}"
    if ref.env is not None:
        value = environ.get(ref.env)
        if not value:
            raise ConfigInvalid(
                f"{label} takes its credential from the environment variable {ref.env},"
                " which is not set",
                field=field,
                env=ref.env,
            )
        return value
    assert ref.var is not None
    if resolve_var is None:
        raise ConfigInvalid(
            f"{label} takes its credential from the variable {ref.var}, and no variable"
            " resolver was given",
            field=field,
            var=ref.var,
        )
    value = resolve_var(ref.var)
    if not value:
        raise ConfigInvalid(
            f"{label}: the variable {ref.var} holding its credential is empty",
            field=field,
            var=ref.var,
        )
    return value


def provider_record(
    host: PluginHost, model: ModelConfig, *, name: str | None = None
) -> ProviderRecord:
    """The installed provider ``model`` names (``name``: the model's name in the config,
    for the error's path); ``config_invalid`` listing the installed ones otherwise."""
    records = host.providers()
    record = records.get(model.provider)
    if record is None:
        known = ", ".join(sorted(records)) or "none (is raw-providers installed?)"
        raise ConfigInvalid(
            f"no provider named {model.provider!r}; the installed providers are: {known}",
            field=f"$.models.{name}.provider" if name is not None else None,
        )
    return record


def make_provider(
    host: PluginHost,
    model: ModelConfig,
    *,
    name: str | None = None,
    environ: Mapping[str, str] = os.environ,
    resolve_var: VarResolver | None = None,
    **options: Any,
) -> Provider:
    """The provider serving ``model`` (named ``name`` in the config, for error paths).

    Looks ``model.provider`` up among the plug-ins' providers, resolves the credential (see
    :func:`resolve_credential`) and calls the factory as ``factory(model, api_key=...,
    **options)``. Raises ``config_invalid`` for an unknown provider or a missing credential,
    and ``plugin_invalid`` when the factory fails with something other than a raw error.
    """
    record = provider_record(host, model, name=name)
    api_key = resolve_credential(model, name=name, environ=environ, resolve_var=resolve_var)
    try:
        provider: Provider = record.factory(model, api_key=api_key, **options)
    except ConfigInvalid as exc:
        if exc.field is None and name is not None:
            exc.context["field"] = f"$.models.{name}"
        raise
    except RawError:
        raise
    except Exception as exc:
        # The message names the exception type only: its text might quote the credential.
        raise PluginInvalid(
            f"the {model.provider!r} provider could not be made: {type(exc).__name__}",
            provider=model.provider,
        ) from None
    return provider

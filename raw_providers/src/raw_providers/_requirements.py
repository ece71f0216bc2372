"""What each provider refuses a model without, read from the model's config alone: the
``check`` of its record (``raw config validate`` runs it, with no credential read) and the
first step of its factory, so both refuse with the same words. Imports no SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core.errors import ConfigInvalid

if TYPE_CHECKING:
    from raw_core.config import ModelConfig

__all__ = ["check_anthropic", "check_openai", "check_openai_compatible", "needs_credential"]


def needs_credential(model: ModelConfig, provider: str, env: str) -> ConfigInvalid:
    """The error for a model of ``provider`` without a credential (``env``: the variable
    the example names)."""
    return ConfigInvalid(
        f"model {model.model!r} (provider {provider}) needs a credential: set its api_key,"
        f' e.g. {{"env": "{env}"}}',
        provider=provider,
    )


def check_openai(model: ModelConfig) -> None:
    """``openai`` needs an ``api_key``."""
    if model.api_key is None:
        raise needs_credential(model, "openai", "OPENAI_API_KEY")


def check_anthropic(model: ModelConfig) -> None:
    """``anthropic`` needs an ``api_key``."""
    if model.api_key is None:
        raise needs_credential(model, "anthropic", "ANTHROPIC_API_KEY")


def check_openai_compatible(model: ModelConfig) -> None:
    """``openai-compatible`` needs a ``base_url`` (a credential is optional)."""
    if not model.base_url:
        raise ConfigInvalid(
            f"model {model.model!r} (provider openai-compatible) needs a base_url, e.g."
            ' "http://127.0.0.1:8080/v1"',
            provider="openai-compatible",
        )

"""The ``providers`` plug-in: the only module of this distribution with hook implementations.

Importing it imports no SDK, nor raw's provider contract: the records are made when the
providers are first asked for, and the factories import ``openai`` / ``anthropic`` when a
model is first made, so ``raw --help`` and plug-in discovery stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from raw_core.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from raw_core.config import ModelConfig
    from raw_core.providers.contract import Provider, ProviderRecord

__all__ = ["raw_register_providers"]


def _openai(model: ModelConfig, api_key: str | None = None, **options: Any) -> Provider:
    from raw_providers.openai_provider import make_openai

    return make_openai(model, api_key, **options)


def _openai_compatible(model: ModelConfig, api_key: str | None = None, **options: Any) -> Provider:
    from raw_providers.openai_provider import make_openai_compatible

    return make_openai_compatible(model, api_key, **options)


def _anthropic(model: ModelConfig, api_key: str | None = None, **options: Any) -> Provider:
    from raw_providers.anthropic_provider import make_anthropic

    return make_anthropic(model, api_key, **options)


@hookimpl
def raw_register_providers() -> list[ProviderRecord]:
    """``openai`` (Chat Completions or the Responses API), ``openai-compatible`` (local and
    third-party servers through ``base_url``) and ``anthropic`` (Messages)."""
    from raw_core.providers.contract import ProviderRecord
    from raw_providers._requirements import check_anthropic, check_openai, check_openai_compatible

    return [
        ProviderRecord(name="openai", factory=_openai, check=check_openai),
        ProviderRecord(
            name="openai-compatible", factory=_openai_compatible, check=check_openai_compatible
        ),
        ProviderRecord(name="anthropic", factory=_anthropic, check=check_anthropic),
    ]

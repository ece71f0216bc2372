"""Model providers for raw, through the official OpenAI and Anthropic SDKs.

The plug-in (entry point ``providers`` in the ``raw`` group, :mod:`raw_providers.plugin`)
registers three providers: ``openai`` (Chat Completions or the Responses API, chosen by
``ModelConfig.api``), ``openai-compatible`` (llama.cpp, vLLM, Ollama, LM Studio and other
servers through ``base_url``) and ``anthropic`` (the Messages API). Public names are
imported lazily (PEP 562); neither SDK is imported until a provider is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_providers.anthropic_provider import AnthropicProvider, make_anthropic
    from raw_providers.openai_provider import (
        OpenAIProvider,
        make_openai,
        make_openai_compatible,
    )

__all__ = [
    "AnthropicProvider",
    "OpenAIProvider",
    "make_anthropic",
    "make_openai",
    "make_openai_compatible",
]

_EXPORTS: dict[str, str] = {
    "AnthropicProvider": "raw_providers.anthropic_provider",
    "make_anthropic": "raw_providers.anthropic_provider",
    "OpenAIProvider": "raw_providers.openai_provider",
    "make_openai": "raw_providers.openai_provider",
    "make_openai_compatible": "raw_providers.openai_provider",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

"""The ``openai`` and ``openai-compatible`` providers, through the official ``openai`` SDK.

``ModelConfig.api`` picks the API: ``chat`` (Chat Completions, the default) or
``responses`` (the Responses API). The two providers differ only in dialect:

* ``openai`` talks to OpenAI (or a ``base_url`` that speaks exactly its API): it needs a
  credential, sends ``max_completion_tokens`` and the prompt-cache key
  (``prompt_cache_key``);
* ``openai-compatible`` talks to a local or third-party server (llama.cpp, vLLM, Ollama,
  LM Studio): it needs ``base_url``, the credential is optional, and it sends only what
  such servers share (``max_tokens``, no cache key).

Neither reads ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` by itself: the credential and the
address come from the model definition only, so a key is never sent to a server the config
did not name. The SDK retries failed requests itself (``max_retries``, 2 by default: connection
errors, 408, 409, 429 and 5xx, honouring ``Retry-After``); :mod:`raw_providers._stream`
adds a retry for a stream that fails before its first event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from raw_core.config import ModelConfig
from raw_core.providers.contract import ModelRequest, ProviderEvent
from raw_providers._content import client_options, request_names
from raw_providers._openai_chat import chat_events, chat_params
from raw_providers._openai_responses import responses_events, responses_params
from raw_providers._requirements import check_openai_compatible, needs_credential
from raw_providers._stream import run_stream

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "OPENAI_BASE_URL",
    "OpenAIProvider",
    "make_openai",
    "make_openai_compatible",
]

OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
DEFAULT_MAX_RETRIES: Final = 2
"""How often the SDK retries a failed request (and raw a stream failing before its first
event)."""

_NO_KEY: Final = "no-key"  # the SDK insists on a key; a server that wants none ignores it


class OpenAIProvider:
    """A model behind the OpenAI SDK. Build it with :func:`make_openai` or
    :func:`make_openai_compatible` (or directly, e.g. with an ``http_client`` for tests)."""

    def __init__(
        self,
        model: ModelConfig,
        *,
        api_key: str | None,
        name: str = "openai",
        official: bool = True,
        http_client: Any = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        self._name = name
        self._model = model
        self._official = official
        self._retries = max_retries
        self._secrets = (api_key,)
        options = client_options(http_client, timeout)
        self._client: AsyncOpenAI = AsyncOpenAI(
            api_key=api_key or _NO_KEY,
            base_url=model.base_url or OPENAI_BASE_URL,
            max_retries=max_retries,
            **options,
        )

    @property
    def name(self) -> str:
        """The provider's name (``openai`` or ``openai-compatible``); also the owner of the
        opaque parts it stores."""
        return self._name

    @property
    def model(self) -> ModelConfig:
        """The model definition this provider serves."""
        return self._model

    def __repr__(self) -> str:
        return f"<OpenAIProvider {self._name} {self._model.model!r} api={self._api}>"

    @property
    def _api(self) -> str:
        return self._model.api or "chat"

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one response; closing the iterator early closes the HTTP response."""
        names = request_names(request)
        if self._api == "responses":
            params = responses_params(
                request, self._model, provider=self._name, official=self._official
            )
            return run_stream(
                provider=self._name,
                secrets=self._secrets,
                retries=self._retries,
                open_stream=lambda: self._client.responses.create(**params),
                events=lambda stream: responses_events(stream, names, provider=self._name),
            )
        params = chat_params(request, self._model, official=self._official)
        return run_stream(
            provider=self._name,
            secrets=self._secrets,
            retries=self._retries,
            open_stream=lambda: self._client.chat.completions.create(**params),
            events=lambda stream: chat_events(stream, names),
        )

    async def aclose(self) -> None:
        """Close the HTTP client (its connection pool)."""
        await self._client.close()

    async def __aenter__(self) -> OpenAIProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def make_openai(model: ModelConfig, api_key: str | None = None, **options: Any) -> OpenAIProvider:
    """The ``openai`` provider's factory: ``factory(model, api_key=...)``."""
    if not api_key:
        raise needs_credential(model, "openai", "OPENAI_API_KEY")
    return OpenAIProvider(model, api_key=api_key, name="openai", official=True, **options)


def make_openai_compatible(
    model: ModelConfig, api_key: str | None = None, **options: Any
) -> OpenAIProvider:
    """The ``openai-compatible`` provider's factory; ``base_url`` is required."""
    check_openai_compatible(model)
    return OpenAIProvider(
        model, api_key=api_key, name="openai-compatible", official=False, **options
    )

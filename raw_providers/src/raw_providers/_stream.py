"""Running one streamed request: error translation, a retry the SDK cannot do, and closing.

The SDKs retry a request themselves (connection errors, 408, 409, 429 and 5xx, with
exponential backoff that honours ``Retry-After``) until their response starts. What they
cannot retry is a stream that fails *after* it started: a connection dropped while reading,
or an ``overloaded`` error event. :func:`run_stream` retries such a failure when no event
has reached the caller yet (so nothing is repeated), with backoff; once an event has been
given out, the error goes to the caller. The SDK stream is closed on every way out — the
end of the stream, an error, or the caller closing the iterator early (``aclose`` on
cancellation), which closes the HTTP response.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final, Protocol, TypeVar

import anyio

from raw_core.errors import ProviderError, ProviderUnavailable, RateLimited
from raw_core.providers.contract import ProviderEvent
from raw_providers._errors import provider_error

__all__ = ["MAX_BACKOFF", "ClosableStream", "run_stream"]

MAX_BACKOFF: Final = 8.0
"""The longest wait between two tries of a failed stream, in seconds."""


class ClosableStream(Protocol):
    """What both SDKs' async streams offer for closing."""

    async def close(self) -> None: ...


S = TypeVar("S", bound=ClosableStream)


def _retryable(error: ProviderError) -> bool:
    return isinstance(error, (ProviderUnavailable, RateLimited))


def _backoff(attempt: int, error: ProviderError) -> float:
    hinted = error.context.get("retry_after")
    if isinstance(hinted, (int, float)) and hinted >= 0:
        return min(float(hinted), MAX_BACKOFF)
    return min(0.5 * 2.0 ** (attempt - 1), MAX_BACKOFF)


async def run_stream(
    *,
    provider: str,
    secrets: Sequence[str | None],
    retries: int,
    open_stream: Callable[[], Awaitable[S]],
    events: Callable[[S], AsyncIterator[ProviderEvent]],
) -> AsyncIterator[ProviderEvent]:
    """Open the stream, translate its events, and close it; see the module docstring."""
    attempt = 0
    while True:
        try:
            stream = await open_stream()
        except Exception as exc:  # the SDK has retried already
            raise provider_error(exc, provider=provider, secrets=secrets) from exc
        given = False
        error: ProviderError | None = None
        try:
            async for event in events(stream):
                given = True
                yield event
            return
        except Exception as exc:
            error = provider_error(exc, provider=provider, secrets=secrets)
            if given or attempt >= retries or not _retryable(error):
                raise error from exc
        finally:
            with anyio.CancelScope(shield=True):
                await stream.close()
        assert error is not None  # only a retryable failure gets here
        attempt += 1
        await anyio.sleep(_backoff(attempt, error))

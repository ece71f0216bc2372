"""The one seam where SDK and HTTP failures become raw's provider errors.

Every adapter sends what went wrong here: an exception of the ``openai`` or ``anthropic``
SDK, an ``httpx2`` transport error raised while a stream was being read, a malformed event,
or an error the service reported inside a stream (an ``error`` or ``response.failed``
event). Out comes one :class:`~raw_core.errors.ProviderError`:

=====================  ==============================================================
``auth_failed``        HTTP 401 / 403, or an ``authentication_error`` / ``permission_error``
``rate_limited``       HTTP 429 or a rate-limit error; ``retry_after`` from ``Retry-After``
``context_too_long``   the services' context-length errors (and HTTP 413)
``provider_unavailable``  connection errors, timeouts, HTTP 408 and 5xx, "overloaded"
``provider_error``     anything else, including a malformed stream
=====================  ==============================================================

The context carries ``provider``, ``status`` (the HTTP status, when there was one),
``retry_after`` (seconds), ``error_type`` (the service's own type or code) and
``request_id``. No error carries the credential: every string of the finished error — its
message and each string of its context, whichever part of the response it came from (the
service's message, ``code``, ``type``, a request-id header) — passes through :func:`scrub`,
which removes the configured key and anything shaped like a credential. The service's text
of an authentication error is left out altogether (OpenAI quotes part of the key there).
The SDKs are never imported here; exceptions are recognised by their class names, which
both SDKs share.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, Final

from raw_core.errors import (
    AuthFailed,
    ContextTooLong,
    ProviderError,
    ProviderFailed,
    ProviderUnavailable,
    RateLimited,
)

__all__ = ["error_from_body", "provider_error", "redact", "scrub"]

_KEY_SHAPED: Final = re.compile(r"\b(?:sk|pk|rk|key|api|token)[-_][A-Za-z0-9*_.\-]{6,}", re.I)
_CONTEXT_CODES: Final = frozenset(
    {"context_length_exceeded", "string_above_max_length", "model_context_window_exceeded"}
)
_CONTEXT_WORDS: Final = re.compile(
    r"context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens"
    r"|reduce the length|input is too long|exceeds? the (model's )?(maximum|context)",
    re.I,
)
_AUTH_TYPES: Final = frozenset({"authentication_error", "permission_error", "invalid_api_key"})
_RATE_TYPES: Final = frozenset({"rate_limit_error", "rate_limit_exceeded", "insufficient_quota"})
_BUSY_TYPES: Final = frozenset(
    {"overloaded_error", "api_error", "server_error", "service_unavailable", "timeout_error"}
)
_MAX_MESSAGE: Final = 500


def _forms(secret: str | None) -> list[str]:
    """A secret as an error message may quote it: as is, without surrounding whitespace,
    and escaped as a str or bytes repr would show it (a key with a stray "\\r" is quoted
    escaped by the HTTP client that refuses it). Longest first."""
    if not secret:
        return []
    found = {secret, secret.strip(), repr(secret)[1:-1]}
    try:
        found.add(repr(secret.encode("utf-8"))[2:-1])
    except UnicodeEncodeError:
        pass
    return sorted((form for form in found if len(form) >= 4), key=len, reverse=True)


def redact(text: str, secrets: Sequence[str | None] = ()) -> str:
    """``text`` without the given secrets and without anything shaped like an API key."""
    for secret in secrets:
        for form in _forms(secret):
            text = text.replace(form, "[redacted]")
    text = _KEY_SHAPED.sub("[redacted]", text)
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"


def _scrubbed(value: Any, secrets: Sequence[str | None]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {key: _scrubbed(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrubbed(item, secrets) for item in value)
    return value


def scrub(error: ProviderError, secrets: Sequence[str | None] = ()) -> ProviderError:
    """``error`` itself, with the secrets and anything shaped like a credential removed
    from its message and from every string of its context (nested ones too).

    The one place where what a service sent is cleaned: every error leaves this module
    through it, so a string that reaches an error by a new path is cleaned as well. The
    error is changed in place, so no unscrubbed copy is left behind in a chain of causes.
    """
    error.message = redact(error.message, secrets)
    error.args = (error.message,)
    error.context = {key: _scrubbed(value, secrets) for key, value in error.context.items()}
    return error


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _error_object(body: Any) -> Mapping[str, Any]:
    """The ``{"type"/"code", "message"}`` object of an error body, wherever it sits."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        return body
    return {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number or an HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return value if math.isfinite(value) and value >= 0 else None


def error_from_body(
    body: Any,
    *,
    provider: str,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    secrets: Sequence[str | None] = (),
    request_id: str | None = None,
) -> ProviderError:
    """The raw error for an error the service described (an HTTP error body, or an error
    event inside a stream, where ``status`` is None or the stream's 200); scrubbed."""
    return scrub(_from_body(body, provider, status, headers, request_id), secrets)


def _from_body(
    body: Any,
    provider: str,
    status: int | None,
    headers: Mapping[str, str] | None,
    request_id: str | None,
) -> ProviderError:
    error = _error_object(body)
    kind = _text(error.get("type"))
    code = _text(error.get("code"))
    labels = {label for label in (kind, code) if label is not None}
    service_text = _text(error.get("message"))
    http = status if status is not None and status >= 400 else None
    context: dict[str, Any] = {
        "provider": provider,
        "status": http,
        "error_type": code or kind,
        "request_id": request_id,
    }
    where = f" (HTTP {http})" if http is not None else ""
    said = f": {service_text}" if service_text else ""

    if http in (401, 403) or labels & _AUTH_TYPES:
        # The service's text is left out: OpenAI quotes part of the key in it.
        label = f" [{code or kind}]" if (code or kind) else ""
        return AuthFailed(
            f"{provider} refused the credential{where}{label}; check the model's api_key",
            **context,
        )
    if http == 429 or labels & _RATE_TYPES:
        retry_after = retry_after_seconds(headers)
        return RateLimited(
            f"{provider} is rate limiting requests{where}{said}",
            retry_after=retry_after,
            **context,
        )
    if (
        http == 413
        or labels & _CONTEXT_CODES
        or (service_text is not None and _CONTEXT_WORDS.search(service_text))
    ):
        return ContextTooLong(
            f"the request is longer than the model's context window{where}{said}", **context
        )
    if (http is not None and (http >= 500 or http == 408)) or labels & _BUSY_TYPES:
        return ProviderUnavailable(f"{provider} is unavailable{where}{said}", **context)
    return ProviderFailed(f"{provider} failed the request{where}{said}", **context)


def provider_error(
    exc: BaseException, *, provider: str, secrets: Sequence[str | None] = ()
) -> ProviderError:
    """Translate ``exc`` (raised by an SDK, httpx2, or while reading a stream) and scrub
    the result; a raw error raised while reading a stream is scrubbed too."""
    error = exc if isinstance(exc, ProviderError) else _translate(exc, provider)
    return scrub(error, secrets)


def _translate(exc: BaseException, provider: str) -> ProviderError:
    names = _class_names(exc)
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None)
    if "APIStatusError" in names and isinstance(status, int):
        headers = getattr(response, "headers", None)
        request_id = None
        if headers is not None:
            request_id = headers.get("x-request-id") or headers.get("request-id")
        return _from_body(getattr(exc, "body", None), provider, status, headers, request_id)
    if "APITimeoutError" in names or "TimeoutException" in names:
        return ProviderUnavailable(f"{provider} did not answer in time", provider=provider)
    if (
        "APIConnectionError" in names
        or "TransportError" in names  # httpx2: connection, read and protocol errors
        or "StreamError" in names
    ):
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        detail = str(cause) or type(cause).__name__
        return ProviderUnavailable(
            f"could not reach {provider} or the connection broke: {detail}", provider=provider
        )
    if "APIResponseValidationError" in names or isinstance(
        exc, (json.JSONDecodeError, KeyError, TypeError)
    ):
        return ProviderFailed(
            f"{provider} sent a malformed response: {type(exc).__name__}: {exc}",
            provider=provider,
        )
    if "APIError" in names:  # an error the service reported inside a stream
        body = getattr(exc, "body", None) or {"message": str(exc)}
        return _from_body(body, provider, None, None, None)
    return ProviderFailed(
        f"{provider} request failed: {type(exc).__name__}: {exc}", provider=provider
    )

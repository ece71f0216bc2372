"""A credential never reaches a raw error, wherever the service puts it.

A scripted service on loopback answers the official SDKs over real HTTP and plants the
credential in every string of its answer: the error's message, ``code``, ``type`` and
``param``, and the ``x-request-id`` / ``request-id`` headers. It plants either the key it
was sent (the configured key, which looks like no key) or another string shaped like a
credential. Neither may appear in the raised error (its message, context, ``str``, ``repr``,
JSON form) nor in what ``raw models check`` prints.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from raw_core.cli.models import models
from raw_core.config import ModelConfig
from raw_core.errors import (
    AuthFailed,
    ContextTooLong,
    ProviderError,
    ProviderFailed,
    ProviderUnavailable,
    RateLimited,
)
from raw_core.providers.contract import ModelRequest
from raw_core.sessions.messages import UserMessage
from raw_providers.anthropic_provider import AnthropicProvider
from raw_providers.openai_provider import OpenAIProvider
from tests.raw_providers.scripted_http import Service, serve_on_loopback

pytestmark = pytest.mark.anyio

# Shaped like no key on purpose: only redacting the configured key removes it.
KEY = "PLAINSECRET0123456789xyz"
SHAPED = "sk-proj-LEAKEDCREDENTIAL0123456789"

APIS = ["openai-chat", "openai-responses", "anthropic"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sent_key(request: httpx2.Request) -> str:
    """The credential the SDK sent: ``Authorization: Bearer`` or ``x-api-key``."""
    bearer = request.headers.get("authorization", "")
    return bearer.removeprefix("Bearer ") or request.headers.get("x-api-key", "")


Plant = Callable[[httpx2.Request], str]
PLANTS = {"configured-key": sent_key, "credential-shaped": lambda request: SHAPED}


def planted_headers(secret: str, **extra: str) -> dict[str, str]:
    return {"x-request-id": secret, "request-id": secret, **extra}


def error_answer(status: int, plant: Plant) -> Callable[[httpx2.Request], httpx2.Response]:
    """An HTTP error whose every string carries the planted credential."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        secret = plant(request)
        body = {
            "type": "error",
            "error": {
                "message": f"Incorrect API key provided: {secret}",
                "type": secret,
                "code": secret,
                "param": secret,
            },
        }
        return httpx2.Response(status, json=body, headers=planted_headers(secret))

    return answer


def stream_error_answer(api: str, plant: Plant) -> Callable[[httpx2.Request], httpx2.Response]:
    """A stream that starts and then reports an error event carrying the credential."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        secret = plant(request)
        data: dict[str, Any]
        if api == "anthropic":
            data = {"type": "error", "error": {"type": secret, "message": f"bad {secret}"}}
            frame = f"event: error\ndata: {json.dumps(data)}\n\n"
        elif api == "openai-responses":
            data = {
                "type": "error",
                "code": secret,
                "message": f"bad {secret}",
                "param": secret,
                "sequence_number": 0,
            }
            frame = f"event: error\ndata: {json.dumps(data)}\n\n"
        else:
            data = {"error": {"message": f"bad {secret}", "type": secret, "code": secret}}
            frame = f"data: {json.dumps(data)}\n\n"
        headers = planted_headers(secret, **{"content-type": "text/event-stream"})
        return httpx2.Response(200, content=frame.encode(), headers=headers)

    return answer


def make(api: str, base_url: str) -> AnthropicProvider | OpenAIProvider:
    if api == "anthropic":
        config = ModelConfig(provider="anthropic", model="claude-test", base_url=base_url)
        return AnthropicProvider(config, api_key=KEY, max_retries=0)
    config = ModelConfig(
        provider="openai",
        model="gpt-test",
        base_url=f"{base_url}/v1",
        api=api.removeprefix("openai-"),  # type: ignore[arg-type]
    )
    return OpenAIProvider(config, api_key=KEY, max_retries=0)


REQUEST = ModelRequest(
    system="Be brief.", tools=(), messages=(UserMessage.from_text("hi"),), cache_key="k"
)


async def raised_by(api: str, service: Service) -> ProviderError:
    with serve_on_loopback(service) as base_url:
        source = make(api, base_url)
        try:
            with pytest.raises(ProviderError) as caught:
                async for _ in source.stream(REQUEST):
                    pass
        finally:
            await source.aclose()
    assert service.requests, "the SDK never reached the loopback service"
    assert sent_key(service.requests[0]) == KEY
    return caught.value


def everything_in(error: ProviderError) -> str:
    parts = [error.message, str(error), repr(error), repr(error.args), repr(error.context)]
    return " ".join([*parts, json.dumps(error.to_dict(), default=str)])


def assert_clean(text: str) -> None:
    assert KEY not in text
    assert "LEAKEDCREDENTIAL" not in text


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, AuthFailed),
        (403, AuthFailed),
        (429, RateLimited),
        (413, ContextTooLong),
        (500, ProviderUnavailable),
        (404, ProviderFailed),
    ],
)
@pytest.mark.parametrize("api", APIS)
async def test_no_string_of_an_error_answer_carries_the_credential(
    api: str, status: int, kind: type[ProviderError], plant: Plant
) -> None:
    error = await raised_by(api, Service(error_answer(status, plant)))
    assert isinstance(error, kind)
    assert error.context["status"] == status
    assert "request_id" in error.context  # the header arrived, and was redacted
    assert_clean(everything_in(error))
    assert "[redacted]" in everything_in(error)


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
@pytest.mark.parametrize("api", APIS)
async def test_no_string_of_an_error_event_carries_the_credential(api: str, plant: Plant) -> None:
    error = await raised_by(api, Service(stream_error_answer(api, plant)))
    assert error.context.get("error_type") is not None
    assert_clean(everything_in(error))


def write_config(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "raw.json"
    model = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": f"{base_url}/v1",
        "api_key": {"env": "RAW_TEST_SECRET_KEY"},
    }
    path.write_text(
        json.dumps({"agents": {"main": {"tools": {"use": []}}}, "models": {"m": model}})
    )
    return path


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_raw_models_check_prints_no_echoed_credential(tmp_path: Path, as_json: bool) -> None:
    service = Service(error_answer(401, sent_key))
    with serve_on_loopback(service) as base_url:
        args = ["check", "m", "--config", str(write_config(tmp_path, base_url))]
        result = CliRunner().invoke(
            models, [*args, "--json"] if as_json else args, env={"RAW_TEST_SECRET_KEY": KEY}
        )
    assert result.exit_code == 1, result.output
    assert sent_key(service.requests[0]) == KEY
    assert "auth_failed" in result.output
    assert KEY not in result.output
    if as_json:
        error: dict[str, Any] = json.loads(result.output)["error"]
        assert error["request_id"] == "[redacted]"

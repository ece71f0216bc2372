"""A scripted HTTP service for the provider tests: the real SDK sends its request through an
httpx2 mock transport, and each request is answered with the service's own wire format."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio
import httpx2


class Body(httpx2.AsyncByteStream):
    """A response body sent chunk by chunk; may then fail or hang, and records closing."""

    def __init__(
        self, chunks: Sequence[bytes], *, fail: Exception | None = None, hang: bool = False
    ) -> None:
        self.chunks = list(chunks)
        self.fail = fail
        self.hang = hang
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        if self.hang:
            await anyio.sleep_forever()
        if self.fail is not None:
            raise self.fail

    async def aclose(self) -> None:
        self.closed = True


Answer = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


class Service:
    """Answers request *n* with answer *n*; keeps the requests (with parsed JSON bodies)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer

    def body(self, index: int = -1) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.requests[index].content)
        return value

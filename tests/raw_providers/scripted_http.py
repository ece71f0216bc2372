"""A scripted HTTP service for the provider tests: each request is answered with the
service's own wire format. The real SDK reaches it through an httpx2 mock transport, or over
real HTTP on loopback (:func:`serve_on_loopback`)."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


class _Handler(BaseHTTPRequestHandler):
    """Hands each request to the server's :class:`Service` and writes its answer."""

    server: _LoopbackServer

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = httpx2.Request(
            self.command,
            f"http://{self.headers.get('host', '127.0.0.1')}{self.path}",
            headers=list(self.headers.items()),
            content=self.rfile.read(length) if length else b"",
        )
        response = self.server.service(request)
        body = response.read()
        self.send_response(response.status_code)
        for name, value in response.headers.multi_items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class _LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, service: Service) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.service = service


@contextmanager
def serve_on_loopback(service: Service) -> Iterator[str]:
    """Serve ``service`` over real HTTP on a free loopback port; yields the base URL
    (``http://127.0.0.1:PORT``). Answers must have their whole body (``json=`` or
    ``content=``); the server is stopped and its thread joined on exit."""
    server = _LoopbackServer(service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)

"""A real HTTP server on 127.0.0.1 for provider tests: an ASGI app under uvicorn, in a thread.

A fake of a provider's API (an OpenAI-compatible ``/v1/embeddings``, a rerank endpoint) served from
here exercises the provider's own HTTP client, retries and timeouts for real, with no traffic beyond
the loopback interface. :class:`ScriptedFakeServer` is the part every such fake shares: replies
queued for the next requests (status, headers, a raw body, a delay), an extra delay for all, and the
number of requests in flight::

    @dataclass
    class Scripted(Reply):
        shuffle: bool = False  # what this API's fake can also be told

    class FakeApi(ScriptedFakeServer[Scripted]):
        def __init__(self) -> None:
            super().__init__(Scripted)
            self.app = Starlette(routes=[Route("/v1/things", self._things, methods=["POST"])])

        async def _things(self, request: Request) -> Response:
            reply = await self.next_reply()  # counts the request in flight while it waits
            ...

    @pytest.fixture(scope="session")
    def api_server() -> Iterator[FakeApi]:
        fake = FakeApi()
        with serve_on_loopback(fake.app, name="fake-api") as port:
            fake.port = port
            yield fake

Needs uvicorn (``pip install 'runiq[testing]'``); the app is any ASGI application.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import uvicorn

__all__ = ["AsgiApp", "Reply", "ScriptedFakeServer", "serve_on_loopback"]

_Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[_Message]], Callable[[_Message], Awaitable[None]]],
    Awaitable[None],
]


@contextmanager
def serve_on_loopback(app: AsgiApp, *, name: str = "runiq-fake-server", start_timeout: float = 10.0) -> Iterator[int]:
    """Serve ``app`` on 127.0.0.1 at a free port (yielded) until the block ends.

    Raises:
        RuntimeError: the server did not start within ``start_timeout`` seconds.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        interface="asgi3",
        lifespan="off",
        ws="none",
        http="h11",
        loop="asyncio",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the {name} server did not start")
            time.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass
class Reply:
    """How a fake answers one request: ``status`` (200 answers normally), extra ``headers``, a raw
    ``body`` instead of the computed one, and a ``delay`` in seconds before answering."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0


R = TypeVar("R", bound=Reply)


class ScriptedFakeServer(Generic[R]):
    """Replies queued for the next requests, an extra ``delay`` for every request, and in-flight counts.

    A request with nothing queued gets ``default()``. Handlers run on the server's own event loop, so
    the counters need no lock.
    """

    def __init__(self, default: Callable[[], R]) -> None:
        self.port = 0
        self.delay = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._default = default
        self._script: deque[R] = deque()

    def script(self, *replies: R) -> None:
        """Answer the next ``len(replies)`` requests with these, in order."""
        self._script.extend(replies)

    def reset(self) -> None:
        """Forget queued replies, the extra delay and the in-flight counts (between tests)."""
        self._script.clear()
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0

    async def next_reply(self) -> R:
        """The reply for the request being handled, after its delay (counted in flight meanwhile)."""
        reply = self._script.popleft() if self._script else self._default()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(reply.delay + self.delay)
        finally:
            self.in_flight -= 1
        return reply

"""runiq.rag.testing.loopback: a real server on 127.0.0.1, scripted replies, in-flight counts."""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from runiq.rag.testing.loopback import Reply, ScriptedFakeServer, serve_on_loopback


@dataclass
class _Scripted(Reply):
    word: str = "default"


class _Fake(ScriptedFakeServer[_Scripted]):
    def __init__(self) -> None:
        super().__init__(_Scripted)

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        reply = await self.next_reply()
        body = reply.body if reply.body is not None else json.dumps({"word": reply.word}).encode()
        headers = [(b"content-type", b"application/json")]
        headers += [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def test_scripted_replies_then_the_default_on_a_loopback_port() -> None:
    """Queued replies answer in order, then ``default()``; the port is on 127.0.0.1 and in-flight is counted."""
    fake = _Fake()
    with serve_on_loopback(fake.app, name="fake-test") as port:
        fake.script(_Scripted(status=503, headers={"retry-after": "1"}), _Scripted(word="second"))
        fake.delay = 0.05
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            first, second, third = await asyncio.gather(*(client.get("/") for _ in range(3)))
            statuses = sorted([first.status_code, second.status_code, third.status_code])
            assert statuses == [200, 200, 503]
            assert sorted(r.json()["word"] for r in (first, second, third) if r.status_code == 200) == [
                "default",
                "second",
            ]
            assert fake.max_in_flight == 3
            assert fake.in_flight == 0
            fake.reset()
            assert (fake.delay, fake.max_in_flight) == (0.0, 0)
            assert (await client.get("/")).json() == {"word": "default"}


def test_the_server_listens_on_the_loopback_interface_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The listening socket is bound to 127.0.0.1 (a fake's bodies echo keys: never on another interface)."""
    bound: list[object] = []

    class Recording(socket.socket):
        def bind(self, address: object) -> None:
            bound.append(address)
            super().bind(address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "socket", Recording)
    with serve_on_loopback(_Fake().app, name="fake-test") as port:
        assert port > 0
    assert bound == [("127.0.0.1", 0)]  # a free port, on the loopback interface

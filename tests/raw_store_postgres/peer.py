"""Another raw process on the same database, for the cross-process tests.

``python peer.py ROLE DSN SESSION_ID [NAME]``; it reports on stdout, one line at a time,
and takes its cue from stdin:

* ``writer``: prints ``ready``, waits for a line, tries to become the session's writer at
  once: prints ``locked``, or ``got`` and then, at the next line, appends a message
  ``NAME`` and prints ``appended``;
* ``holder``: becomes the writer, prints ``holding``, and holds it until killed (or stdin
  closes);
* ``follower``: takes the session's tail, prints ``following``, waits (20 s at most) for
  what is appended next and prints its texts as a JSON list.
"""

from __future__ import annotations

import json
import sys

import anyio
import anyio.to_thread

from raw_core.errors import SessionLocked
from raw_core.sessions.messages import AssistantMessage, UserMessage
from raw_store_postgres import PostgresBackend


def say(line: str) -> None:
    print(line, flush=True)


async def cue() -> str:
    return await anyio.to_thread.run_sync(sys.stdin.readline)


async def main(role: str, dsn: str, session_id: str, name: str) -> None:
    async with await PostgresBackend.open(dsn, pool_size=1) as backend:
        if role == "writer":
            say("ready")
            await cue()
            try:
                async with backend.open_writer(session_id, wait=0) as writer:
                    say("got")
                    await cue()
                    await writer.append([UserMessage.from_text(name)])
                    say("appended")
            except SessionLocked:
                say("locked")
        elif role == "holder":
            async with backend.open_writer(session_id, wait=0):
                say("holding")
                await cue()
        elif role == "follower":
            tail = await backend.tail_cursor(session_id)
            say("following")
            with anyio.fail_after(20):
                page = await backend.wait_for_items(session_id, tail)
            texts = []
            for item in page.items:
                message = item.message
                if isinstance(message, AssistantMessage):
                    texts.append(message.text)
                elif isinstance(message, UserMessage):
                    texts.append(message.content[0].text)  # type: ignore[union-attr]
            say(json.dumps(texts))
        else:
            raise SystemExit(f"unknown role {role!r}")


if __name__ == "__main__":
    role, dsn, session_id, *rest = sys.argv[1:]
    anyio.run(main, role, dsn, session_id, rest[0] if rest else role)

"""A separate process that uses a session store, driven by the store tests.

``python store_proc.py writer DIR SESSION FIRST_TURN TURN_SIZE``
    Append turns of TURN_SIZE messages (``t<turn>.<i>``), one transaction each, forever;
    print each turn number once its append has returned (committed); end a turn with a
    checkpoint every fifth turn. The test kills it with SIGKILL.

``python store_proc.py race DIR SESSION NAME``
    Print ``ready``, wait for a line on stdin, then try to become the session's writer at
    once. On success append one message NAME, print ``wrote`` and hold the lock until stdin
    closes; otherwise print ``locked <code>``.

``python store_proc.py appender DIR SESSION``
    Become the writer, print ``ready``; for each line N read from stdin, append the next N
    messages ``w<j>``, one transaction each, and print ``appended``; at the end of stdin,
    print ``done``.

``python store_proc.py follow DIR SESSION COUNT``
    Open a ``SqliteBackend``, take the session's tail cursor, print ``ready``, then follow
    the session with ``wait_for_items`` and print the text of each new item until COUNT
    have come (at most 60 s: a bound on a hang, not a speed), then ``done``.
"""

from __future__ import annotations

import sys

from raw_core.errors import SessionLocked
from raw_core.sessions.sqlite import SessionStore, TextBlock, UserMessage

PAD = "x" * 2000


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def writer(directory: str, session_id: str, first_turn: int, turn_size: int) -> None:
    with SessionStore.open(directory) as store, store.open_writer(session_id) as session:
        turn = first_turn
        while True:
            session.append(
                UserMessage(content=(TextBlock(text=f"t{turn}.{i}"), TextBlock(text=PAD)))
                for i in range(turn_size)
            )
            say(str(turn))
            if turn % 5 == 4:
                session.end_turn()
            turn += 1


def race(directory: str, session_id: str, name: str) -> None:
    with SessionStore.open(directory) as store:
        say("ready")
        sys.stdin.readline()
        try:
            session = store.open_writer(session_id, wait=0)
        except SessionLocked as exc:
            say(f"locked {exc.code}")
            return
        with session:
            session.append([UserMessage.from_text(name)])
            say("wrote")
            sys.stdin.read()


def appender(directory: str, session_id: str) -> None:
    with SessionStore.open(directory) as store, store.open_writer(session_id) as session:
        say("ready")
        written = 0
        for request in sys.stdin:
            for j in range(written, written + int(request)):
                session.append([UserMessage.from_text(f"w{j}")])
            written += int(request)
            say("appended")
        say("done")


async def follow(directory: str, session_id: str, count: int) -> None:
    import anyio

    from raw_core.sessions.sqlite import SqliteBackend

    async with await SqliteBackend.open(directory) as backend:
        cursor = await backend.tail_cursor(session_id)
        say("ready")
        seen = 0
        with anyio.fail_after(60):
            while seen < count:
                page = await backend.wait_for_items(session_id, cursor)
                for item in page.items:
                    message = item.message
                    assert isinstance(message, UserMessage)
                    block = message.content[0]
                    assert isinstance(block, TextBlock)
                    say(block.text)
                seen += len(page.items)
                assert page.next_cursor is not None
                cursor = page.next_cursor
        say("done")


def main(argv: list[str]) -> None:
    command, directory, session_id, *rest = argv
    if command == "writer":
        writer(directory, session_id, int(rest[0]), int(rest[1]))
    elif command == "race":
        race(directory, session_id, rest[0])
    elif command == "appender":
        appender(directory, session_id)
    elif command == "follow":
        import anyio

        anyio.run(follow, directory, session_id, int(rest[0]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""``raw acp``: the process around the server — its pipes, its log, its exit.

Standard output must carry protocol messages only, whatever a tool, a plug-in or a
library prints, and a child process must not read the client's messages. So the command
first moves the two pipes to descriptors of its own: the client's messages are read from
a copy of stdin, raw's messages written to a copy of stdout, while descriptor 0 becomes
``/dev/null`` and descriptor 1 a copy of stderr (``print`` lands in the log, not the
protocol). The log goes to stderr or ``--log-file``; a Python traceback never reaches
stdout.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import anyio

from raw_core.errors import RawError, UsageInvalid

if TYPE_CHECKING:
    from acp import Agent

__all__ = ["run_command", "serve"]

logger = logging.getLogger("raw_acp")

_ANSWER_SECONDS = 30
"""How long the requests read before the end of input are waited for."""


def _take_stdio() -> tuple[int, int]:
    """``(read_fd, write_fd)`` of the protocol; fds 0 and 1 no longer reach the client."""
    sys.stdout.flush()
    read_fd, write_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return read_fd, write_fd


def _log_to(log_file: Path | None, level: str) -> None:
    handler: logging.Handler
    if log_file is None:
        handler = logging.StreamHandler(sys.stderr)
    else:
        try:
            handler = logging.FileHandler(log_file)
        except OSError as exc:
            raise UsageInvalid(
                f"cannot open the log file {str(log_file)!r}: {exc.strerror or exc}",
                field="--log-file",
            ) from None
    handler.setFormatter(logging.Formatter("raw acp %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))


async def serve(
    app: Any,
    read_fd: int,
    write_fd: int,
    *,
    agent: str | None = None,
    max_message_bytes: int | None = None,
) -> None:
    """Serve ACP on ``read_fd`` / ``write_fd`` through ``app`` until the client closes its
    end; then cancel what runs and close the sessions. Runs on anyio's asyncio backend."""
    from acp.agent.connection import AgentSideConnection

    from raw_acp._wire import DEFAULT_MAX_MESSAGE_BYTES, open_stdio_transport
    from raw_acp.server import RawAgent

    transport = await open_stdio_transport(
        read_fd, write_fd, max_message_bytes=max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
    )
    async with anyio.create_task_group() as group:
        server = RawAgent(app, group, agent=agent, send=transport.send)
        # RawAgent has the methods raw supports; the SDK answers the others with
        # "method not found", so it is not the SDK's whole Agent protocol.
        connection = AgentSideConnection(
            cast("Agent", server), transport, listening=False, use_unstable_protocol=True
        )
        try:
            await connection.listen()
        except Exception:
            logger.exception("the connection failed")
        finally:
            with anyio.CancelScope(shield=True):
                # Answer what was read before the end of input (a request piped in
                # with the input closed at once is still answered); running turns
                # are cancelled, so this wait is short unless a tool ignores it.
                server.disconnect()
                with anyio.move_on_after(_ANSWER_SECONDS):
                    await transport.wait_answered()
                await server.shutdown()
                await connection.close()
            # The sessions close in their own tasks (each writer released, its turn
            # recorded); a close that hangs is not waited for past this.
            group.cancel_scope.deadline = anyio.current_time() + 30


def _fail(error: RawError) -> NoReturn:
    field = f" ({error.field})" if error.field else ""
    print(f"raw: {error.code}: {error.message}{field}", file=sys.stderr)
    sys.exit(2)


def run_command(
    *,
    config_path: Path | None,
    agent: str | None,
    log_file: Path | None,
    log_level: str,
    max_message_bytes: int | None = None,
) -> None:
    """The body of ``raw acp``: exits 0 when the client closed, 2 for a usage or config
    error (a log file that cannot be opened, an agent the config lacks, input or output
    raw cannot use), reported as one line on stderr and nothing on stdout."""

    async def main() -> None:
        from raw_core import App

        async with App.open(config_path) as app:
            app.config.resolve_agent(agent)  # an agent it lacks fails now, not per session
            await serve(app, read_fd, write_fd, agent=agent, max_message_bytes=max_message_bytes)

    try:
        read_fd, write_fd = _take_stdio()
        _log_to(log_file, log_level)
        anyio.run(main, backend="asyncio")
    except RawError as exc:
        _fail(exc)
    except (OSError, ValueError) as exc:  # stdio raw cannot serve on, before it started
        _fail(UsageInvalid(f"cannot serve ACP on this standard input and output: {exc}"))
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(0)

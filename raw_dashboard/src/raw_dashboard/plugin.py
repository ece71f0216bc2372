"""The ``dashboard`` plug-in: adds ``raw dashboard`` to the command line.

Registering imports only click; the server (starlette, uvicorn) is imported when the
command runs.
"""

from __future__ import annotations

from typing import Any

from raw_core import hookimpl

__all__ = ["raw_register_commands"]


@hookimpl
def raw_register_commands(cli: Any) -> None:
    """``raw dashboard``."""
    from raw_dashboard.command import dashboard

    cli.add_command(dashboard)

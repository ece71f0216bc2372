"""``raw dashboard``: serve the browser dashboard on 127.0.0.1.

The first line of standard output is the URL to open (it carries this process's token);
by default the browser opens it. Ctrl-C stops the server (exit 130); turns it still runs
are cancelled cleanly. A config error (an ``--agent`` the config lacks included) or a port
in use exits 2 before the URL is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from raw_core.errors import RawError

__all__ = ["dashboard"]


@click.command("dashboard")
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=8765,
    show_default=True,
    help="The port on 127.0.0.1 (0: a free one).",
)
@click.option("--no-open", "no_open", is_flag=True, help="Print the URL; open no browser.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The config file (default: a trusted ./raw.json, else ~/.config/raw/config.json).",
)
@click.option(
    "--agent",
    "agent_name",
    default=None,
    help="The agent new turns use (default: the only one, or default_agent).",
)
def dashboard(port: int, no_open: bool, config_path: Path | None, agent_name: str | None) -> None:
    """Serve the dashboard on 127.0.0.1: sessions, live turns, approvals and panels.

    Prints the URL (with its token) as the first line of standard output and opens it,
    unless --no-open.
    """
    import anyio

    from raw_core.app import App
    from raw_dashboard.live import APPROVAL_WAIT
    from raw_dashboard.server import Dashboard

    async def main() -> None:
        async with App.open(config_path, approval_wait=APPROVAL_WAIT) as app:
            if agent_name is not None:  # an agent the config lacks fails now, not per turn
                app.config.resolve_agent(agent_name)
            server = Dashboard(app, port=port, agent=agent_name, signals=True)
            server.listen()
            async with anyio.create_task_group() as group:
                group.start_soon(server.serve)
                url = await server.started()
                click.echo(url)
                sys.stdout.flush()
                if not no_open:
                    import webbrowser  # here: ``raw --help`` lists this command

                    webbrowser.open(url)

    try:
        anyio.run(main)
    except RawError as error:
        click.echo(f"raw: {error}", err=True)
        sys.exit(2)

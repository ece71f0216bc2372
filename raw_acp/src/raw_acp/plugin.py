"""The ``acp`` plug-in: the command ``raw acp`` and the config's ``acp`` key.

Registering imports nothing heavy: the protocol's SDK (seconds to import) is imported
when ``raw acp`` starts serving, so ``raw --help`` and every other command never pay for it;
raw's config records are imported when the config sections are first asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from raw_core import hookimpl

if TYPE_CHECKING:
    from raw_core import ConfigSection

__all__ = ["raw_register_commands", "raw_register_config_sections"]


def _validate(value: Any, field: str) -> Any:
    from raw_acp.client_mcp import parse_acp_section

    return parse_acp_section(value, field)


@hookimpl
def raw_register_config_sections() -> list[ConfigSection]:
    """The ``acp`` key (``acp.client_mcp_servers``)."""
    from raw_core import ConfigSection

    return [ConfigSection(name="acp", validate=_validate)]


@hookimpl
def raw_register_commands(cli: click.Group) -> None:
    """``raw acp``."""

    @cli.command("acp")
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
        help="The agent (default: the only one, or default_agent).",
    )
    @click.option(
        "--log-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Write the log to this file instead of standard error.",
    )
    @click.option(
        "--log-level",
        type=click.Choice(["debug", "info", "warning", "error"]),
        default="warning",
        show_default=True,
        help="How much to log.",
    )
    @click.option(
        "--max-message-bytes",
        type=click.IntRange(min=1024),
        default=16 * 1024 * 1024,
        show_default=True,
        help="The longest message (one line) raw reads; a longer one is refused.",
    )
    def acp(
        config_path: Path | None,
        agent_name: str | None,
        log_file: Path | None,
        log_level: str,
        max_message_bytes: int,
    ) -> None:
        """Serve raw's sessions over the Agent Client Protocol on stdin and stdout.

        For editors (Zed) and parent agents (acpx): they start `raw acp` and speak ACP to
        it. Standard output carries protocol messages only; the log goes to standard
        error (or --log-file). Exits 0 when the client closes the connection, 2 for a
        usage or config error.
        """
        from raw_acp.command import run_command

        run_command(
            config_path=config_path,
            agent=agent_name,
            log_file=log_file,
            log_level=log_level,
            max_message_bytes=max_message_bytes,
        )

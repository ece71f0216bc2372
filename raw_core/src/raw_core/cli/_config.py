"""Loading the config and the agent the same way in every command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from raw_core.cli._output import fail
from raw_core.errors import RawError

__all__ = ["config_option", "load_cli_agent", "load_cli_config"]

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The config file (default: a trusted ./raw.json, else ~/.config/raw/config.json).",
)


def load_cli_config(config_path: Path | None, *, as_json: bool) -> Any:
    """The config (found as :func:`raw_core.discovery.find_config` says); exits 2 on error."""
    from raw_core.config import load_config
    from raw_core.discovery import find_config

    try:
        return load_config(find_config(config_path))
    except RawError as exc:
        fail(exc, as_json=as_json)


def load_cli_agent(
    config_path: Path | None, agent_name: str | None, *, as_json: bool
) -> tuple[Any, Any, Any]:
    """``(config, host, agent)``: plug-ins loaded, the agent resolved; exits 2 on error."""
    from raw_core.agent import load_agent
    from raw_core.plugins import PluginHost

    config = load_cli_config(config_path, as_json=as_json)
    try:
        host = PluginHost()
        host.load_entry_points()
        agent = load_agent(config, agent_name, host=host)
    except RawError as exc:
        fail(exc, as_json=as_json)
    return config, host, agent

"""The reference command line, ``raw``.

Exit codes (design.md): 0 success; 1 the checked thing or the call ended in an error; 2 a
usage or config error. No traceback reaches the user for bad input: every
:class:`~raw_core.errors.RawError` is printed as ``code: message`` (or as JSON with
``--json``).
"""

from __future__ import annotations

import click

from raw_core import __version__
from raw_core.cli.call import call
from raw_core.cli.config import config
from raw_core.cli.policy import policy
from raw_core.cli.tools import tools

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="raw", message="%(prog)s %(version)s")
def cli() -> None:
    """raw: the tool contract of a local coding agent."""


tools.add_command(call)
cli.add_command(tools)
cli.add_command(policy)
cli.add_command(config)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="raw")

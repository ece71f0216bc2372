"""A click group whose subcommands are imported when first asked for.

Each subcommand of ``raw`` lives in a module of its own, and some of those modules import
what only their command needs. A :class:`LazyGroup` knows its subcommands by name and
where each is defined (``"raw_core.cli.sessions:sessions"``) and imports a module only
when its command runs, or when the commands are listed with their short help (``--help``):
``raw tools list`` imports the ``tools`` module alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

__all__ = ["LazyGroup"]


class LazyGroup(click.Group):
    """A group with ``lazy`` subcommands: a mapping of name to ``"module:attribute"``. A
    lazy command is imported once, then held like a command added with ``add_command``;
    the group lists its added and its lazy commands alike, in name order."""

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, str] = dict(lazy or {})

    def has_command(self, name: str) -> bool:
        """Whether ``name`` is one of this group's own commands, imported or not."""
        return name in self.commands or name in self.lazy

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{module}:{attribute} is not a click command")
            del self.lazy[cmd_name]  # imported: from now on one of the group's commands
            self.add_command(command, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

"""Running a command against the session service, the same way in every command.

Every command that needs a config, an agent, sessions or a model opens one
:class:`raw_core.app.App` here and does its work through it: the CLI parses arguments and
renders; it builds no dispatcher, store or provider itself.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from raw_core.cli._output import EXIT_INTERRUPTED, fail
from raw_core.errors import ConfigInvalid, ConfigNotFound, RawError

if TYPE_CHECKING:
    from raw_core.app import App
    from raw_core.cli._interrupt import CtrlC

__all__ = ["FiniteRange", "agent_option", "config_option", "max_output_bytes_option", "with_app"]


class FiniteRange(click.FloatRange):
    """A number of seconds or days: a ``FloatRange`` that also refuses ``nan`` and
    ``inf`` (which pass its bounds: no comparison with ``nan`` is true)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The config file (default: a trusted ./raw.json, else ~/.config/raw/config.json).",
)

agent_option = click.option(
    "--agent",
    "agent_name",
    default=None,
    help="The agent (default: the only one, or default_agent).",
)

max_output_bytes_option = click.option(
    "--max-output-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="The result cap: how much of one call's output the model receives (default: the"
    " agent's max_output_bytes).",
)


def with_app(
    work: Callable[[App], Awaitable[int]],
    *,
    config_path: Path | None,
    as_json: bool,
    error_exit: int = 2,
    ctrl_c: CtrlC | None = None,
    **options: Any,
) -> int:
    """Open the app (``options`` go to :meth:`App.open`), run ``work`` with it and return
    its exit code. A :class:`~raw_core.errors.RawError` is reported as ``code: message``
    (or JSON) and exits ``error_exit``: 2, a usage or config error, by default. With
    ``ctrl_c``, Ctrl-C is received from before the app opens until after it closed (see
    :mod:`raw_core.cli._interrupt`); when one stops the work, the exit code is 130."""
    import anyio

    from raw_core.app import App
    from raw_core.cli._log import install

    install()

    async def named(app: App) -> int:
        try:
            return await work(app)
        except (ConfigInvalid, ConfigNotFound) as exc:
            # Found after the config loaded: it names the file the agents come from,
            # unless the code that raised it named the layer at fault.
            if "path" not in exc.context and app.config.path is not None:
                exc.context["path"] = str(app.config.path)
            raise

    async def main() -> int:
        if ctrl_c is None:
            async with App.open(config_path, **options) as app:
                return await named(app)
        code = EXIT_INTERRUPTED  # unless the work returns: Ctrl-C stopped it
        async with ctrl_c.watch(), App.open(config_path, **options) as app:
            code = await named(app)
        # SIGTERM or a closed stdout: its own exit code, however the work ended.
        return ctrl_c.exit_code if ctrl_c.exit_code is not None else code

    try:
        return anyio.run(main)
    except RawError as exc:
        fail(exc, as_json=as_json, exit_code=error_exit)

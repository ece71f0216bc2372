"""The environment a hook command runs in: raw's own, minus the credentials raw resolves.

raw reads a model's API key from the environment variable its ``api_key`` names, and a
variable's value from the one its ``from.env`` names; a hook is someone else's program, so
it gets neither. Everything else of raw's environment is passed on, and ``RAW_HOOK_DIR``
names the hook's folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from raw_core.config import Config

__all__ = ["credential_names", "hook_environment"]


def credential_names(config: Config) -> frozenset[str]:
    """The environment variables ``config`` reads credentials and variables from."""
    names: set[str] = set()
    for model in config.models.values():
        if model.api_key is not None and model.api_key.env is not None:
            names.add(model.api_key.env)
    for var in config.vars.values():
        if var.source.env is not None:
            names.add(var.source.env)
    return frozenset(names)


def hook_environment(
    folder: str, withheld: frozenset[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``environ`` (default: raw's) without ``withheld``, with ``RAW_HOOK_DIR`` set."""
    source = os.environ if environ is None else environ
    env = {name: value for name, value in source.items() if name not in withheld}
    env["RAW_HOOK_DIR"] = folder
    return env

"""What to do about an error a user caused: one line printed under ``raw: code: message``.

A hint is only given where the next step is clear from the error itself: the variable to
set for a missing credential (and the config field naming it; for a credential read
through a config variable, where that variable's definition reads it from), the command
that lists what an unknown id could have been, the ``--help`` of the command that was
misused.
"""

from __future__ import annotations

from raw_core.errors import RawError

__all__ = ["hint"]

_BY_CODE = {
    "session_not_found": "`raw sessions list` shows the sessions (a prefix of an id will do)",
    "session_expired": "start a new session: `raw chat`",
    "session_locked": "another raw process has this session open; let it end, then try again",
    "config_not_found": "`raw config init` writes a starter config; --config names another file",
    "config_untrusted": "`raw config trust` trusts this folder, or pass the file with --config",
    "config_exists": "edit that file, or give `raw config init` another PATH",
    "tool_not_found": "`raw tools list` shows the tools the agent's model receives",
}


def hint(error: RawError, *, command: str | None = None) -> str | None:
    """The hint for ``error`` (``command``: the command line's command, for --help)."""
    if error.code == "config_not_found" and error.context.get("layer") == "managed":
        named_by = error.context.get("named_by")
        if isinstance(named_by, str):
            return f"the managed config is an administrator's: fix the file, or unset {named_by}"
        return "the managed config is an administrator's: ask them to fix the file"
    env = error.context.get("env")
    if error.code in ("config_invalid", "var_unavailable") and isinstance(env, str):
        where = f" or change {error.field} in the config" if error.field else ""
        return f"set the environment variable: export {env}=...{where}"
    var = error.context.get("var")
    if error.code == "var_unavailable" and isinstance(var, str):
        source = error.context.get("source")
        file = error.context.get("file")
        if source == "file" and isinstance(file, str):
            return f"put the value in {file}, or change vars.{var}.from in the config"
        if source == "command":
            return f"run the command vars.{var}.from names to see why it fails, or change it"
    if error.code == "usage_invalid":
        return f"`{command or 'raw'} --help` shows the usage"
    return _BY_CODE.get(error.code)

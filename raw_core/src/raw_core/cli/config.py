"""``raw config``: create a starter config, validate one, trust a project folder."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from raw_core.cli._output import EXIT_OK, EXIT_USAGE, emit_json, fail
from raw_core.errors import ConfigExists, ConfigInvalid, ConfigNotFound, RawError, UsageInvalid

__all__ = ["STARTER_CONFIG", "STARTER_RULES", "config"]

DELETING_PROGRAMS = "^(rm|rmdir|unlink|shred|wipefs|dd|truncate|mke2fs|mkfs|mkfs\\..+)$"
"""The starter's programs that delete or overwrite data, as a regex over program names."""

SHELL_TOOLS = ("builtin/bash", "builtin/process")
"""The tools whose effects say what a command line would run, in one shape."""


def _programs(*names: str) -> dict[str, Any]:
    """A bash effects object (as ``raw policy explain`` prints one, cut to what the rules
    read) in which one command runs ``names``."""
    return {"commands": [{"programs": [{"name": name} for name in names], "flags": []}]}


def _lines(*lines: str) -> dict[str, Any]:
    return {"commands": [{"programs": [{"line": line} for line in lines], "flags": []}]}


def _flags(*flags: str) -> dict[str, Any]:
    return {"commands": [{"programs": [], "flags": list(flags)}]}


STARTER_RULES: list[dict[str, Any]] = [
    {
        "match": list(SHELL_TOOLS),
        "effect": "ask",
        "when": {
            "source": "effects",
            "any": "commands[*].programs[*].name",
            "regex": DELETING_PROGRAMS,
        },
        "examples": {
            "match": [
                _programs("sudo", "rm"),
                _programs("find", "xargs", "shred"),
                _programs("mkfs.ext4"),
            ],
            "not_match": [_programs("echo"), _programs("git"), _programs("rmdir-helper")],
        },
    },
    {
        "match": list(SHELL_TOOLS),
        "effect": "ask",
        "when": {
            "source": "effects",
            "any": "commands[*].programs[*].line",
            "regex": "^find .* -delete( |$)",
        },
        "examples": {
            "match": [_lines("find . -name '*.o' -delete")],
            "not_match": [_lines("find . -name '*.o' -print"), _lines("echo find x -delete")],
        },
    },
    {
        "match": list(SHELL_TOOLS),
        "effect": "ask",
        "when": {
            "source": "effects",
            "any": "commands[*].flags[*]",
            "regex": "^(unparsed|dynamic)$",
        },
        "examples": {
            "match": [_flags("dynamic"), _flags("unparsed")],
            "not_match": [_flags()],
        },
    },
]
"""Ask before a bash command (or a process start of builtin/process, whose effects have the
same shape) that runs a deleting program (through any wrapper: sudo, xargs, find -exec,
bash -c...), that runs ``find ... -delete``, or that cannot be read (text that does not
parse, a program name that is not known before it runs)."""

STARTER_CONFIG: dict[str, Any] = {
    "default_agent": "coder",
    "models": {
        "default": {
            "provider": "openai",
            "model": "gpt-4.1-mini",
            "api_key": {"var": "OPENAI_API_KEY"},
        }
    },
    "vars": {
        "OPENAI_API_KEY": {
            "description": "The API key of the default model",
            "from": {"env": "OPENAI_API_KEY"},
        }
    },
    "skills": {"paths": ["skills"]},
    "sessions": {"expire_after_days": 30},
    "agents": {
        "coder": {
            "model": "default",
            "system": "You are a careful coding agent. Read before you write, and say what"
            " you changed.",
            "max_steps": 50,
            "max_output_bytes": 8192,
            "tools": {
                "use": [
                    "builtin/read_file",
                    "builtin/write_file",
                    "builtin/bash",
                    "builtin/list_skills",
                    "builtin/load_skill",
                    "builtin/list_vars",
                    "builtin/read_var",
                ],
                "rules": STARTER_RULES,
            },
            "skills": {"use": []},
            "vars": {"use": []},
        }
    },
}


@click.group()
def config() -> None:
    """Create, validate and trust config files."""


@config.command("init")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def init(path: Path | None) -> None:
    """Write a starter config to PATH (default: ~/.config/raw/config.json).

    Its agent selects the seven starter tools and asks before any bash command that runs
    a deleting program (rm, rmdir, shred, dd, mkfs.*...), whoever runs it (sudo, xargs,
    find -exec, bash -c...), and before one that cannot be read. An existing file is never
    overwritten.
    """
    from raw_core.app import user_config_path

    target = path if path is not None else user_config_path()
    text = json.dumps(STARTER_CONFIG, indent=2) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a folder on the way is a file, or cannot be made
        _unwritable(target, exc)
    try:
        with open(target, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        if target.is_dir():  # no config file to keep: PATH names a folder
            fail(
                UsageInvalid(
                    f"{target} is a folder; give raw config init the path of a file to write",
                    path=str(target),
                ),
                as_json=False,
                command="raw config init",
            )
        fail(
            ConfigExists(
                f"{target} exists; raw config init never overwrites a file", path=str(target)
            ),
            as_json=False,
        )
    except OSError as exc:
        _unwritable(target, exc)
    click.echo(f"wrote {target}")
    click.echo("It uses OpenAI with the key in $OPENAI_API_KEY; edit models to change that.")


def _unwritable(target: Path, error: OSError) -> NoReturn:
    """``usage_invalid`` for a PATH raw cannot write (``config_exists`` is only for a file
    that is there)."""
    reason = error.strerror or str(error)
    if error.filename is not None and str(error.filename) != str(target):
        reason = f"{reason}: {error.filename}"
    if isinstance(error, FileExistsError):  # from mkdir: a folder on the way is a file
        reason = f"{error.filename} is not a folder"
    fail(
        UsageInvalid(f"cannot write {target}: {reason}", path=str(target)),
        as_json=False,
        command="raw config init",
    )


@config.command("validate")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The config file (default: found as every command finds it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {ok, path, files, problems, notes}.")
def validate(config_path: Path | None, as_json: bool) -> None:
    """Check the config files in use (the managed config, the user's, the project's or
    --config FILE) and every agent; print every problem at once, with its path, and name
    every file in use.

    Exits 0 when the config is valid, 2 otherwise.
    """
    import anyio

    from raw_core.app import validate_config
    from raw_core.cli._log import install

    install()
    report = anyio.run(validate_config, config_path)
    problems: list[dict[str, Any]] = []
    for error in report.problems:
        # A config file's error lists each of its problems; any other error is one.
        listed = (error.context.get("problems") if isinstance(error, ConfigInvalid) else None) or [
            {"path": error.field or "$", "message": error.message}
        ]
        problems.extend(
            {"code": error.code, "field": p["path"], "message": p["message"]} | _in_file(error)
            for p in listed
        )
    files = [{"layer": f.kind, "path": str(f.path) if f.path else None} for f in report.files]
    notes = list(report.notes)
    path = report.path
    if as_json:
        emit_json(
            {
                "ok": not problems,
                "path": str(path) if path else None,
                "files": files,
                "problems": problems,
                "notes": notes,
            }
        )
    elif problems:
        for problem in problems:
            where = f" (in {problem['path']})" if problem.get("path") else ""
            click.echo(
                f"{problem['field']}: {problem['code']}: {problem['message']}{where}", err=True
            )
        click.echo(f"{len(problems)} problem{'s' if len(problems) > 1 else ''}", err=True)
    else:
        for file in files:
            click.echo(f"{file['path']}: valid ({file['layer']} config)")
        for note in notes:
            click.echo(f"note: {note}")
    sys.exit(EXIT_USAGE if problems else EXIT_OK)


def _in_file(error: RawError) -> dict[str, Any]:
    """``{"path": file}`` for a config error that names its file (one of the layers)."""
    where = error.context.get("path")
    if isinstance(error, ConfigInvalid | ConfigNotFound) and isinstance(where, str):
        return {"path": where}
    return {}


@config.command("trust")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
def trust(directory: Path | None) -> None:
    """Trust DIRECTORY (default: the current one), so its raw.json is used.

    A project's raw.json can select agent/ tools, command hooks and command variables, which
    run code, so raw reads it only from folders you trusted.
    """
    from raw_core.app import trust_folder

    try:
        real = trust_folder(directory if directory is not None else Path(os.getcwd()))
    except RawError as exc:
        fail(exc, as_json=False)
    click.echo(f"trusted {real}")

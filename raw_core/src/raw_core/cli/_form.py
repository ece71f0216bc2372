"""Asking an interaction request's form on the terminal.

The blocks around the form are printed first (a question's text, say); then each field in
turn: a text field reads one line (a ``multiline`` one reads lines until an empty line), a
single-select field lists its options numbered and reads one number, a multi-select field
reads numbers separated by commas or spaces. Enter alone takes the field's default (or
leaves an optional field empty). ``/cancel`` at any prompt cancels the request; Ctrl-C
cancels it and the turn, as everywhere. The values are checked against the form as the
session service checks them; an answer that does not fit is explained and asked again.
Everything is written to stderr, so stdout keeps only the answer of the turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from raw_core.cli._panels import block_lines

__all__ = ["CANCEL", "ask_form"]

CANCEL = "/cancel"


class _Cancelled(Exception):
    """The person typed ``/cancel``."""


async def _line(reader: Any, prompt: str) -> str:
    line = await reader.readline(prompt)
    if line is None or line.strip() == CANCEL:  # end of input cancels too
        raise _Cancelled
    return str(line)


def _numbers(text: str, count: int) -> list[int] | None:
    """The 1-based choices in ``text`` as 0-based indexes; ``None`` when one is not a
    number from 1 to ``count``."""
    picked: list[int] = []
    for part in text.replace(",", " ").split():
        if not part.isdigit() or not 1 <= int(part) <= count:
            return None
        picked.append(int(part) - 1)
    return picked


async def _text(reader: Any, field: Mapping[str, Any]) -> str | None:
    default = field.get("default")
    hint = f" [{default}]" if default else ""
    if field.get("multiline"):
        click.echo(f"{field['label']}{hint} (an empty line ends it):", err=True)
        lines: list[str] = []
        while True:
            line = await _line(reader, "  ")
            if not line:
                break
            lines.append(line)
        text = "\n".join(lines)
    else:
        text = await _line(reader, f"{field['label']}{hint}: ")
    return text if text else None


async def _select(reader: Any, field: Mapping[str, Any]) -> Any:
    options = field["options"]
    many = field["type"] == "multi_select"
    click.echo(field["label"] + (" (choose any, e.g. 1,3)" if many else ""), err=True)
    default = field.get("default")
    chosen = set(default if isinstance(default, list | tuple) else [default])
    for number, option in enumerate(options, 1):
        mark = " (default)" if option["value"] in chosen else ""
        click.echo(f"  {number}) {option['label']}{mark}", err=True)
    while True:
        text = (await _line(reader, "numbers: " if many else "number: ")).strip()
        if not text:
            return None
        picked = _numbers(text, len(options))
        if picked is None or (not many and len(picked) != 1):
            click.echo(
                f"  expected {'numbers' if many else 'one number'} from 1 to {len(options)}",
                err=True,
            )
            continue
        values = [options[i]["value"] for i in picked]
        return values if many else values[0]


def _needs_answer(field: Mapping[str, Any]) -> bool:
    """Whether Enter alone is no answer: a required field without a default, or a
    multi-select that needs at least one choice."""
    if field["type"] == "multi_select":
        return int(field.get("min_selected", 0)) > 0 and not field.get("default")
    return bool(field.get("required")) and not field.get("default")


async def _fields(reader: Any, form: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in form["fields"]:
        while True:
            if field["type"] == "text":
                given = await _text(reader, field)
            else:
                given = await _select(reader, field)
            if given is not None or not _needs_answer(field):
                break
            click.echo("  expected an answer: the field is required", err=True)
        if given is not None:
            values[field["id"]] = given
    return values


async def ask_form(
    reader: Any, document: Mapping[str, Any], *, title: str, identity: str
) -> dict[str, Any] | None:
    """Ask the document's form on the terminal; the checked values, or ``None`` when the
    person cancelled."""
    from raw_core.app import check_answer
    from raw_core.errors import AnswerInvalid

    blocks = document["blocks"]
    form = next(b for b in blocks if b.get("type") == "form")
    click.echo(f"\n? {title} — {identity} asks:", err=True)
    for block in blocks:
        if block is not form:
            for line in block_lines(block):
                click.echo(f"  {line}", err=True)
    if form.get("title"):
        click.echo(str(form["title"]), err=True)
    click.echo(f"(type {CANCEL} to cancel the question)", err=True)
    while True:
        try:
            values = await _fields(reader, form)
        except _Cancelled:
            click.echo("(question cancelled)", err=True)
            return None
        try:
            return check_answer(form, values)
        except AnswerInvalid as error:
            for problem in error.context.get("errors", []):
                click.echo(f"  {problem['field']}: {problem['message']}", err=True)
            click.echo("please answer again", err=True)

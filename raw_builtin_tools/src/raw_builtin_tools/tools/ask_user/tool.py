"""builtin/ask_user: ask the user one to three structured questions and wait for the answers.

Built on interaction requests (``context.interactions.request``): the questions become one
``form`` block — a ``text`` field, a ``single_select`` or a ``multi_select`` field per
question, each required — shown in the tool's chat panel ``questions``. The arguments are
checked as a whole before anything is asked (the schema, then :func:`validate_args`, which
lists every problem at once). The model reads the answers as text, one per question, and as
JSON (``{"answers": [{"question", "answer"}]}``: a string, or a list of the chosen options).

When nobody can answer (a piped or non-interactive run) the call ends at once with
``interaction_unavailable``; a question nobody answers in time with
``interaction_expired``; a question the user cancelled with ``cancelled``.
"""

from __future__ import annotations

from typing import Any

from raw_builtin_tools.toolkit import surrogate_problem

_FIELD_TYPES = {"text": "text", "single_choice": "single_select", "multiple_choice": "multi_select"}


def validate_args(args: Any) -> str | None:
    """Choices need options, each listed once; text questions take none; no question twice;
    no text UTF-8 cannot hold (a lone surrogate)."""
    problems: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(args["questions"]):
        where = f"questions[{index}]"
        text = entry["question"].strip()
        written = [("question", entry["question"])] + [
            (f"options[{i}]", option) for i, option in enumerate(entry.get("options") or ())
        ]
        for name, value in written:  # JSON lets a lone surrogate through; no screen shows one
            surrogate = surrogate_problem(value)
            if surrogate is not None:
                problems.append(f"{where}.{name} {surrogate}")
        if not text:
            problems.append(f"{where}.question is blank")
        elif text in seen:
            problems.append(f"{where}: the question {text!r} is asked twice")
        seen.add(text)
        options = entry.get("options")
        if entry["type"] == "text":
            if options is not None:
                problems.append(f"{where}: a text question takes no options")
            continue
        if options is None:
            problems.append(f"{where}: a {entry['type']} question needs 2 to 10 options")
            continue
        cleaned = [option.strip() for option in options]
        if any(not option for option in cleaned):
            problems.append(f"{where}.options: an option is blank")
        elif len(set(cleaned)) != len(cleaned):
            problems.append(f"{where}.options: an option is listed twice")
    if problems:
        return "; ".join(problems) + " (nothing was asked)"
    return None


def _field(index: int, entry: Any) -> dict[str, Any]:
    kind = _FIELD_TYPES[entry["type"]]
    field: dict[str, Any] = {
        "type": kind,
        "id": f"q{index + 1}",
        "label": entry["question"].strip(),
    }
    if kind == "text":
        field["required"] = True
        return field
    field["options"] = [
        {"value": option.strip(), "label": option.strip()} for option in entry["options"]
    ]
    if kind == "single_select":
        field["required"] = True
    else:
        field["min_selected"] = 1
    return field


def _answer_text(answer: Any) -> str:
    if isinstance(answer, list | tuple):
        return ", ".join(answer)
    return str(answer)


async def handler(args: Any, context: Any) -> dict[str, Any]:
    """Ask the questions as one form and return the answers."""
    questions = list(args["questions"])
    form = {
        "type": "form",
        "title": "The assistant asks",
        "fields": [_field(index, entry) for index, entry in enumerate(questions)],
        "submit": {"label": "Answer"},
        "cancel": {"label": "Skip"},
    }
    answer = await context.interactions.request(panel="questions", document={"blocks": [form]})
    values = answer.values
    answers = []
    lines = ["The user answered:"]
    for index, entry in enumerate(questions):
        given = values.get(f"q{index + 1}")
        given = list(given) if isinstance(given, list | tuple) else given
        answers.append({"question": entry["question"].strip(), "answer": given})
        lines.append(f"{index + 1}. {entry['question'].strip()}")
        lines.append(f"   {_answer_text(given)}")
    return {
        "content": [
            {"type": "text", "text": "\n".join(lines)},
            {"type": "json", "json": {"answers": answers}},
        ]
    }

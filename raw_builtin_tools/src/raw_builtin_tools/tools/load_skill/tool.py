"""builtin/load_skill: the Markdown body of one selected skill."""

from __future__ import annotations

from typing import Any

from raw_core import SkillService


def handler(args: Any, context: Any) -> dict[str, Any]:
    """The body of the named skill (its Markdown after the front matter, as it is); an
    unselected name ends the call as skill_not_selected.

    Without the agent's skills (a dispatcher given none) no name is selected: an empty
    :class:`raw_core.SkillService` refuses it with raw_core's own error.
    """
    skills = context.skills if context.skills is not None else SkillService(())
    skill = skills.load(args["name"])
    return {"content": [{"type": "text", "text": skill.body}]}

"""builtin/load_skill: the Markdown body of one selected skill."""

from __future__ import annotations

from typing import Any

from raw_core.errors import SkillNotSelected


def handler(args: Any, context: Any) -> dict[str, Any]:
    """The body of the named skill; an unselected name ends the call as skill_not_selected."""
    if context.skills is None:
        raise SkillNotSelected(f"no skills are available; cannot load {args['name']!r}")
    skill = context.skills.load(args["name"])
    return {"content": [{"type": "text", "text": f"# Skill: {skill.name}\n\n{skill.body}"}]}

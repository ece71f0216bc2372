"""builtin/list_skills: the agent's selected skills, with their descriptions."""

from __future__ import annotations

from typing import Any


def handler(args: Any, context: Any) -> dict[str, Any]:
    """One line per selected skill, in the agent's skills.use order."""
    skills = context.skills.listing() if context.skills is not None else []
    if not skills:
        text = "No skills are available."
    else:
        text = "\n".join(f"{skill.name}: {skill.description}" for skill in skills)
    return {"content": [{"type": "text", "text": text}]}

"""An agent's ``hooks`` section: which command hooks it selects, and its time limit for them.

``hooks.use`` names hook folders by identity, as ``tools.use`` names tools: ``agent/<folder>``
(``hooks/<folder>/`` beside the config file) or ``local/<folder>`` (the user's
``$XDG_CONFIG_HOME/raw/hooks/<folder>/``). They run in the order listed. ``timeout_ms``
lowers the limit of every selected hook when the agent sets it (a hook's own
``timeout_ms`` may be lower still; a hook that sets none has 60 s). The folders themselves
are read when the agent is loaded (:mod:`raw_core.hooks`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

import attrs

from raw_core._convert import FieldProblem, json_text

if TYPE_CHECKING:
    from raw_core.config._model import _ConfigFile

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_MS",
    "HOOK_SOURCES",
    "MAX_HOOK_TIMEOUT_MS",
    "HooksConfig",
    "hook_problems",
]

DEFAULT_HOOK_TIMEOUT_MS: Final = 60_000
MAX_HOOK_TIMEOUT_MS: Final = 600_000  # ten minutes, as for a bash command
HOOK_SOURCES: Final = ("agent", "local")
_HOOK_IDENTITY: Final = re.compile(r"(agent|local)/[a-z][a-z0-9_-]*")


@attrs.frozen(kw_only=True)
class HooksConfig:
    """``{"use": [...], "timeout_ms"?: N}``: the command hooks an agent selects, in the
    order they run, and the most milliseconds any of them may take (None: each hook's own
    limit, 60 s for a hook that sets none)."""

    use: tuple[str, ...] = ()
    timeout_ms: int | None = None


def hook_problems(parsed: _ConfigFile) -> list[FieldProblem]:
    """Each agent's ``hooks``: identities of the form ``agent/<folder>`` or
    ``local/<folder>``, each selected once, and a time limit within bounds."""
    found: list[FieldProblem] = []
    for name, agent in parsed.agents.items():
        base = f"$.agents.{name}.hooks"
        seen: set[str] = set()
        for index, identity in enumerate(agent.hooks.use):
            path = f"{base}.use[{index}]"
            if not _HOOK_IDENTITY.fullmatch(identity):
                found.append(
                    FieldProblem(
                        path=path,
                        message="expected a hook identity, agent/<folder> or local/<folder>"
                        " (lowercase letters, digits, _ and -, starting with a letter),"
                        f" found {json_text(identity)}",
                    )
                )
            elif identity in seen:
                found.append(FieldProblem(path=path, message=f"{identity!r} is selected twice"))
            seen.add(identity)
        timeout = agent.hooks.timeout_ms
        if timeout is not None and not 0 < timeout <= MAX_HOOK_TIMEOUT_MS:
            found.append(
                FieldProblem(
                    path=f"{base}.timeout_ms",
                    message=f"expected milliseconds above 0 and at most {MAX_HOOK_TIMEOUT_MS},"
                    f" found {timeout}",
                )
            )
    return found

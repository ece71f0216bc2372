"""Skills: folders of reusable instructions an agent can list and load.

A skill is a folder holding ``SKILL.md``: front matter with ``name`` (equal to the folder
name) and ``description``, then a Markdown body::

    ---
    name: review
    description: How to review a change in this repository.
    ---
    Read the diff first, then ...

The config lists the folders that hold skills (``skills.paths``, relative to the config
file); an agent selects skills by name (``skills.use``). Only selected skills are read. The
model lists them with ``builtin/list_skills`` and reads one with ``builtin/load_skill``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

from raw_core.errors import ConfigInvalid, SkillNotSelected

__all__ = ["Skill", "SkillService", "find_skills", "parse_skill"]

SKILL_FILE: Final = "SKILL.md"
MAX_SKILL_BYTES: Final = 256 * 1024
_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")


@attrs.frozen(kw_only=True)
class Skill:
    """A loaded skill; ``digest`` identifies its text (a changed text has a new one)."""

    name: str
    description: str
    body: str
    path: Path
    digest: str


def parse_skill(text: str, *, path: Path) -> Skill:
    """Parse the text of a ``SKILL.md``; raise ``ValueError`` saying what is wrong (with the
    line number).

    The front matter is read as the simple YAML it usually is, without a YAML library:
    ``key: value`` lines, where ``name`` and ``description`` are text — plain or quoted, on
    one line or continued on indented lines, or a folded (``>``) or literal (``|``) block —
    and any other key is skipped with the indented lines or list items below it. A UTF-8
    byte order mark is dropped and Windows line endings (CRLF) are read as ``\\n``.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[0].strip() != "---":
        raise ValueError("line 1: expected front matter starting with '---'")
    fields: dict[str, str] = {}
    entry: _Entry | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            body = "\n".join(lines[number:]).strip("\n")
            break
        if entry is not None and entry.takes(line):
            entry.lines.append((number, line))
            continue
        if entry is not None:
            fields[entry.key] = entry.value()
            entry = None
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or key != key.strip():
            raise ValueError(f"line {number}: expected 'key: value' in the front matter")
        entry = _Entry(key=key, inline=value.strip(), line=number)
    else:
        raise ValueError("the front matter never ends: expected a closing '---' line")
    if entry is not None:
        fields[entry.key] = entry.value()
    for required in ("name", "description"):
        if not fields.get(required):
            raise ValueError(f"the front matter has no {required!r}")
    name = fields["name"]
    if not _NAME.fullmatch(name):
        raise ValueError(f"name {name!r}: expected lowercase letters, digits, _ and -")
    if name != path.parent.name:
        raise ValueError(f"name {name!r} must equal the folder name {path.parent.name!r}")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Skill(name=name, description=fields["description"], body=body, path=path, digest=digest)


_TEXT_KEYS: Final = frozenset({"name", "description"})
_BLOCK: Final = re.compile(r"[>|][+-]?")


@attrs.define
class _Entry:
    """One front-matter key and the lines that continue it."""

    key: str
    inline: str
    line: int
    lines: list[tuple[int, str]] = attrs.field(factory=list)

    def takes(self, line: str) -> bool:
        """Whether ``line`` continues this key: an indented line, a blank line inside it,
        or a list item under a key with no value on its own line."""
        if line[:1] in (" ", "\t"):
            return True
        if not line.strip():
            return bool(self.lines) or bool(_BLOCK.fullmatch(self.inline))
        return not self.inline and (line == "-" or line.startswith("- "))

    def value(self) -> str:
        """The key's text (other keys are not read: an empty string)."""
        if self.key not in _TEXT_KEYS:
            return ""
        lines = [line for _, line in self.lines]
        while lines and not lines[-1].strip():
            lines.pop()
        items = (line.strip() == "-" or line.lstrip().startswith("- ") for line in lines)
        if not self.inline and any(items):
            raise ValueError(f"line {self.line}: expected {self.key!r} to be text, found a list")
        if _BLOCK.fullmatch(self.inline):
            indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
            lines = [line[indent:] for line in lines]
            if self.inline.startswith("|"):
                return "\n".join(lines).strip("\n")
            return _folded(lines)
        value = _folded([self.inline, *(line.strip() for line in lines)])
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        return value


def _folded(lines: list[str]) -> str:
    """Lines joined as YAML folds them: by a space, a blank line making a line break."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n".join(" ".join(words) for words in paragraphs if words)


def find_skills(
    names: Sequence[str], paths: Sequence[str], *, base_dir: Path | None, field: str
) -> tuple[Skill, ...]:
    """Load the skills ``names`` from the first of ``paths`` that has each; an entry that is
    not a skill name (a path: ``../x``, ``/x``), a missing or a malformed skill is
    ``config_invalid`` naming its ``skills.use`` entry."""
    roots = []
    for raw in paths:
        root = Path(os.path.expanduser(raw))
        if not root.is_absolute() and base_dir is not None:
            root = base_dir / root
        roots.append(root)
    found: list[Skill] = []
    for index, name in enumerate(names):
        where = f"{field}[{index}]"
        if not _NAME.fullmatch(name):
            raise ConfigInvalid(
                "expected a skill name (lowercase letters, digits, _ and -, looked up in"
                f" skills.paths), found {json.dumps(name)}",
                field=where,
            )
        candidates = [root / name / SKILL_FILE for root in roots]
        file = next((c for c in candidates if c.is_file()), None)
        if file is None:
            looked = ", ".join(str(c.parent) for c in candidates) or "no skills.paths are set"
            raise ConfigInvalid(f"skill {name!r} not found (looked in: {looked})", field=where)
        try:
            data = file.read_bytes()
            if len(data) > MAX_SKILL_BYTES:
                raise ValueError(f"larger than {MAX_SKILL_BYTES} bytes")
            found.append(parse_skill(data.decode("utf-8"), path=file))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConfigInvalid(f"skill {name!r} ({file}): {exc}", field=where) from None
    return tuple(found)


class SkillService:
    """The skills an agent selected; per session it remembers which texts the model read."""

    def __init__(self, skills: Sequence[Skill], seen: Mapping[str, str] | None = None) -> None:
        self._skills = {skill.name: skill for skill in skills}
        self.seen: dict[str, str] = dict(seen or {})

    def for_session(self, seen: Mapping[str, str] | None = None) -> SkillService:
        """The same skills with a session's own record of what the model has read."""
        return SkillService(list(self._skills.values()), seen)

    def listing(self) -> list[Skill]:
        """The selected skills, in ``skills.use`` order."""
        return list(self._skills.values())

    def load(self, name: str) -> Skill:
        """A selected skill, recorded as read (``skill_not_selected`` otherwise)."""
        skill = self._skills.get(name)
        if skill is None:
            listed = ", ".join(self._skills) or "none"
            raise SkillNotSelected(
                f"the agent does not select a skill named {name!r} (selected: {listed})",
                skill=name,
            )
        self.seen[name] = skill.digest
        return skill

    def changed_since_read(self) -> list[Skill]:
        """Skills the model read whose text has changed since."""
        return [
            self._skills[n]
            for n, digest in self.seen.items()
            if n in self._skills and self._skills[n].digest != digest
        ]

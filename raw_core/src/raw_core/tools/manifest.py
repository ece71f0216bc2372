"""Tool manifests (``tool.json``, ``api_version: 2``): the records and every rule on them.

:func:`parse_manifest` checks everything that can be checked from ``tool.json`` alone —
fields and their formats, unknown fields at every level, both JSON Schemas, panel
declarations — and never imports code. The one rule that needs the module (an
``effects_schema`` when it exports ``describe_effects``) is checked by the loader right
after import. Every error is a :class:`~raw_core.errors.ManifestInvalid` whose ``field`` is
the JSON path of the offending field.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from raw_core._convert import (
    FieldProblem,
    FieldValueError,
    StructureFailed,
    json_text,
    make_converter,
    structure,
)
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import ManifestInvalid
from raw_core.frozen import thaw
from raw_core.tools._schema import SchemaDefinitionError, prepare_schema

__all__ = [
    "KNOWN_PANEL_ICONS",
    "MAX_PANELS",
    "ConditionSource",
    "PanelAction",
    "PanelDeclaration",
    "PanelIconWarning",
    "ToolManifest",
    "parse_manifest",
]

API_VERSION: Final = 2
MAX_PANELS: Final = 4
MAX_MANIFEST_BYTES: Final = 1024 * 1024

ConditionSource = Literal["arguments", "effects"]

KNOWN_PANEL_ICONS: Final = frozenset(
    {
        "panel",
        "checklist",
        "list",
        "terminal",
        "file",
        "folder",
        "diagram",
        "chart",
        "info",
        "warning",
        "question",
        "search",
        "clock",
        "globe",
        "code",
    }
)

_ID_RE: Final = re.compile(r"[a-z][a-z0-9_-]*")
_VERSION_RE: Final = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_PANEL_ID_RE: Final = re.compile(r"[a-z][a-z0-9_-]{0,63}")


class PanelIconWarning(UserWarning):
    """A panel declares an icon raw does not know; it is shown as ``panel``."""


def _fullmatch(pattern: re.Pattern[str], expected: str) -> Any:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
        if not pattern.fullmatch(value):
            raise FieldValueError(attribute.name, f"expected {expected}, found {json_text(value)}")

    return check


def _non_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip():
        raise FieldValueError(attribute.name, "expected a non-empty string")


@attrs.frozen(kw_only=True)
class PanelAction:
    """A menu item on a panel.

    ``type: "prompt"`` drafts ``prompt`` as a message for the user; ``type: "tool"`` runs
    the declaring tool again with ``arguments``, through the normal tool path.
    """

    id: str = attrs.field(
        validator=_fullmatch(
            _PANEL_ID_RE, "an action id: lowercase letters, digits, _ and -, starting with a letter"
        )
    )
    title: str = attrs.field(validator=_non_empty)
    type: Literal["prompt", "tool"]
    prompt: str | None = None
    arguments: Mapping[str, Any] | None = None

    def __attrs_post_init__(self) -> None:
        if self.type == "prompt" and self.prompt is None:
            raise ValueError("a prompt action needs 'prompt'")
        if self.type == "prompt" and self.arguments is not None:
            raise ValueError("a prompt action takes no 'arguments'")
        if self.type == "tool" and self.prompt is not None:
            raise ValueError("a tool action takes no 'prompt'")

    def to_dict(self) -> dict[str, Any]:
        """The action as JSON (``prompt`` or ``arguments`` by its type), detached."""
        data: dict[str, Any] = {"id": self.id, "title": self.title, "type": self.type}
        if self.type == "prompt":
            data["prompt"] = self.prompt
        else:
            data["arguments"] = thaw(self.arguments) if self.arguments is not None else {}
        return data


@attrs.frozen(kw_only=True)
class PanelDeclaration:
    """One panel a tool owns (spec 000, "Panels → Declaration")."""

    id: str = attrs.field(
        validator=_fullmatch(
            _PANEL_ID_RE, "a panel id: lowercase letters, digits, _ and -, starting with a letter"
        )
    )
    title: str = attrs.field(validator=_non_empty)
    icon: str = "panel"
    placement: Literal["sidebar", "chat"] = "sidebar"
    context: Literal["summary"] | None = None
    acp_plan: bool = False
    actions: tuple[PanelAction, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The declaration as JSON, every field present (``context`` null when not set);
        what the display history stores with each update, so compaction and ACP read
        ``context`` and ``acp_plan`` from there."""
        return {
            "id": self.id,
            "title": self.title,
            "icon": self.icon,
            "placement": self.placement,
            "context": self.context,
            "acp_plan": self.acp_plan,
            "actions": [action.to_dict() for action in self.actions],
        }


@attrs.frozen(kw_only=True)
class ToolManifest:
    """A validated ``tool.json``.

    ``input_schema`` and ``effects_schema`` are the schemas as written (what the model and
    the documentation see); the loader compiles their draft-07 form.
    """

    api_version: int
    id: str = attrs.field(
        validator=_fullmatch(_ID_RE, "lowercase letters, digits, _ and -, starting with a letter")
    )
    version: str = attrs.field(validator=_fullmatch(_VERSION_RE, "major.minor.patch"))
    name: str = attrs.field(
        validator=_fullmatch(
            _NAME_RE,
            "a name that starts with a letter or _ and has at most 64 letters, digits, _ or -",
        )
    )
    description: str = attrs.field(validator=_non_empty)
    input_schema: Mapping[str, Any]
    entry: str
    condition_sources: tuple[ConditionSource, ...] = ()
    effects_schema: Mapping[str, Any] | None = None
    panels: tuple[PanelDeclaration, ...] = ()

    @property
    def declares_effects_conditions(self) -> bool:
        """Whether rules may inspect the tool's intended effects."""
        return "effects" in self.condition_sources


_CONVERTER: Final = make_converter()


def _problem(message: str, path: str, tool: str | None) -> ManifestInvalid:
    return ManifestInvalid(message, field=path, tool=tool)


def _check_rules(
    data: Mapping[str, Any], manifest: ToolManifest, tool: str | None
) -> dict[str, Any]:
    """The rules that span fields, checked after every field has its type."""
    if manifest.api_version != API_VERSION:
        raise _problem(
            f"expected the integer {API_VERSION}, found {json_text(manifest.api_version)}",
            "$.api_version",
            tool,
        )
    if len(set(manifest.condition_sources)) != len(manifest.condition_sources):
        raise _problem("each source may appear once", "$.condition_sources", tool)
    if manifest.declares_effects_conditions and manifest.effects_schema is None:
        raise _problem(
            "condition_sources names 'effects', so effects_schema is required",
            "$.effects_schema",
            tool,
        )
    if len(manifest.panels) > MAX_PANELS:
        raise _problem(
            f"at most {MAX_PANELS} panels, found {len(manifest.panels)}", "$.panels", tool
        )
    seen: set[str] = set()
    for index, panel in enumerate(manifest.panels):
        if panel.id in seen:
            raise _problem(
                f"panel id {json_text(panel.id)} is declared twice", f"$.panels[{index}].id", tool
            )
        seen.add(panel.id)
        action_ids: set[str] = set()
        for a_index, action in enumerate(panel.actions):
            if action.id in action_ids:
                raise _problem(
                    f"action id {json_text(action.id)} is declared twice",
                    f"$.panels[{index}].actions[{a_index}].id",
                    tool,
                )
            action_ids.add(action.id)
    _check_entry_path(manifest.entry, tool)
    prepared: dict[str, Any] = {}
    for key in ("input_schema", "effects_schema"):
        schema = data.get(key)
        if schema is None:
            continue
        try:
            prepared[key] = prepare_schema(schema, path=f"$.{key}")
        except SchemaDefinitionError as exc:
            raise _problem(exc.message, exc.path, tool) from None
    return prepared


def _check_entry_path(entry: str, tool: str | None) -> None:
    parts = entry.replace("\\", "/").split("/")
    if entry.startswith("/") or ".." in parts or not entry.strip():
        raise _problem(
            f"entry must be a relative path inside the tool folder, found {json_text(entry)}",
            "$.entry",
            tool,
        )
    if not entry.endswith(".py"):
        raise _problem(
            f"entry must name a Python file (.py), found {json_text(entry)}", "$.entry", tool
        )


def parse_manifest(text: str | bytes, *, tool: str | None = None) -> ToolManifest:
    """Parse and check the text of a ``tool.json``. Imports nothing.

    ``tool`` names the folder in error messages. Unknown panel icons fall back to ``panel``
    and issue a :class:`PanelIconWarning`.
    """
    return parse_manifest_and_schemas(text, tool=tool)[0]


def parse_manifest_and_schemas(
    text: str | bytes, *, tool: str | None = None
) -> tuple[ToolManifest, dict[str, Any]]:
    """:func:`parse_manifest`, and the schemas as checking them prepared them for
    compiling (draft-07 form, by key: ``input_schema``, ``effects_schema`` when declared),
    so that the loader compiles them without preparing them a second time."""
    # surrogatepass: a lone surrogate in the text is refused by the checks, not by encode().
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_MANIFEST_BYTES:
        raise _problem(f"tool.json is {size} bytes; the limit is {MAX_MANIFEST_BYTES}", "$", tool)
    try:
        data = loads_strict(text)
    except JsonInputError as exc:
        raise _problem(f"tool.json is not valid JSON: {exc}", "$", tool) from None
    if isinstance(data, dict) and "api_version" in data and data["api_version"] != API_VERSION:
        # Say this first: a manifest of another version fails every other rule too.
        found = data["api_version"]
        raise _problem(
            f"expected the integer {API_VERSION}, found {json_text(found)}", "$.api_version", tool
        )
    try:
        manifest = structure(_CONVERTER, data, ToolManifest)
    except StructureFailed as exc:
        first: FieldProblem = exc.problems[0]
        error = _problem(first.message, first.path, tool)
        error.context["problems"] = [attrs.asdict(p) for p in exc.problems]
        raise error from None
    prepared = _check_rules(data, manifest, tool)
    panels = tuple(
        _with_known_icon(panel, index, tool) for index, panel in enumerate(manifest.panels)
    )
    if panels != manifest.panels:
        manifest = attrs.evolve(manifest, panels=panels)
    return manifest, prepared


def _with_known_icon(panel: PanelDeclaration, index: int, tool: str | None) -> PanelDeclaration:
    if panel.icon in KNOWN_PANEL_ICONS:
        return panel
    warnings.warn(
        PanelIconWarning(
            f"{tool or 'tool'}: panel {json_text(panel.id)} ($.panels[{index}].icon) has"
            f' unknown icon {json_text(panel.icon)}; showing "panel"'
        ),
        stacklevel=3,
    )
    return attrs.evolve(panel, icon="panel")

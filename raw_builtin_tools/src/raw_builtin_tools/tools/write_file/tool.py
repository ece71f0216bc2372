"""builtin/write_file: ordered edits or a multi-file patch, applied all together or not at all.

Two input forms (``docs/tools/write_file.md``):

* ``{"operations": [...]}`` — 1 to 16 edits, applied in order: ``overwrite``, ``append``,
  ``replace_text`` (``old`` must occur exactly once) and ``replace_lines``;
* ``{"patch": "*** Begin Patch ..."}`` — add, update (with an optional move) and delete
  files; the grammar is in :func:`raw_builtin_tools.toolkit.parse_patch`.

``validate_args`` rejects a malformed call before anything runs (a patch that does not
parse names its line). ``describe_effects`` names every target of either form as an
absolute, lexically normalized path with its operation, and reads nothing. The handler
then acts on exactly those paths: it prepares the whole call in memory, each entry against
the state the earlier ones leave, and writes only when every entry can apply
(:class:`raw_builtin_tools.toolkit.Workspace` commits with atomic renames).

The handler is ``async`` so that it can shield the commit: planning runs in a worker thread
and is abandoned at once on cancellation (it has written nothing); the commit, once
started, is shielded so the call's result always says what is on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import anyio

from raw_builtin_tools.toolkit import (
    AddFile,
    DeleteFile,
    Edit,
    EditError,
    PatchSyntaxError,
    Workspace,
    append,
    normalize,
    overwrite,
    parse_patch,
    patch_add,
    patch_delete,
    patch_update,
    path_problem,
    replace_lines,
    replace_text,
    surrogate_problem,
)
from raw_core import BatchResult, ToolContext

# The fields each operation takes beside "op" and "path".
_FIELDS: Final = {
    "overwrite": ("content",),
    "append": ("content",),
    "replace_text": ("old", "new"),
    "replace_lines": ("start_line", "end_line", "content"),
}


def validate_args(args: Mapping[str, Any]) -> str | None:
    """Reject what the schema cannot say: one form only, per-operation fields, the patch."""
    if ("operations" in args) == ("patch" in args):
        return (
            "give exactly one of `operations` (a list of edits) or `patch` (a"
            " '*** Begin Patch' text)"
        )
    if "patch" in args:
        surrogate = surrogate_problem(args["patch"])
        if surrogate is not None:
            return f"patch {surrogate}"
        try:
            parse_patch(args["patch"])
        except PatchSyntaxError as exc:
            return str(exc)
        return None
    for index, operation in enumerate(args["operations"]):
        where = f"operations[{index}]"
        problem = path_problem(operation["path"])
        if problem is not None:
            return f"{where}.path {problem}"
        kind = operation["op"]
        needed = _FIELDS[kind]
        missing = [name for name in needed if name not in operation]
        if missing:
            return f"{where}: {kind} needs {', '.join(repr(name) for name in missing)}"
        extra = sorted(set(operation) - {"op", "path", *needed})
        if extra:
            return f"{where}: {kind} does not take {', '.join(repr(name) for name in extra)}"
        for name in ("content", "old", "new"):
            surrogate = surrogate_problem(operation.get(name, ""))
            if surrogate is not None:
                return f"{where}.{name} {surrogate}"
        if kind == "replace_text" and operation["old"] == operation["new"]:
            return f"{where}: `old` and `new` are the same; the edit would change nothing"
        if kind == "replace_lines" and operation["end_line"] < operation["start_line"] - 1:
            return (
                f"{where}: end_line must be at least start_line - 1 (start_line - 1 inserts"
                " before start_line without replacing)"
            )
    return None


def _targets(args: Mapping[str, Any], cwd: str) -> list[tuple[str, str]]:
    """``(path, operation)`` for every target, in order; pure."""
    if "operations" in args:
        return [
            (normalize(str(operation.get("path", "")), cwd), "write")
            for operation in args["operations"]
        ]
    try:
        patch = parse_patch(args.get("patch", ""))
    except PatchSyntaxError:
        return []  # validate_args refuses the call before the effects are asked for
    found: list[tuple[str, str]] = []
    for operation in patch.operations:
        path = normalize(operation.path, cwd)
        if isinstance(operation, AddFile):
            found.append((path, "write"))
        elif isinstance(operation, DeleteFile):
            found.append((path, "delete"))
        elif operation.move_to is None:
            found.append((path, "write"))
        else:
            found.append((path, "rename_source"))
            found.append((normalize(operation.move_to, cwd), "rename_destination"))
    return found


def describe_effects(args: Mapping[str, Any], context: ToolContext) -> dict[str, Any]:
    """``{"files": [{"path", "operation"}]}``: every target, absolute and lexically
    normalized against ``context.cwd``; no file is looked at."""
    unique = dict.fromkeys(_targets(args, str(context.cwd)))
    return {"files": [{"path": path, "operation": operation} for path, operation in unique]}


def _edits(args: Mapping[str, Any], cwd: str) -> list[tuple[str, Edit]]:
    """The call's entries as ``(label, edit)``, with paths normalized as the effects say."""
    if "operations" in args:
        edits: list[tuple[str, Edit]] = []
        for operation in args["operations"]:
            kind, path = operation["op"], normalize(operation["path"], cwd)
            label = f"{kind} {operation['path']}"
            if kind == "overwrite":
                edits.append((label, overwrite(path, operation["content"])))
            elif kind == "append":
                edits.append((label, append(path, operation["content"])))
            elif kind == "replace_text":
                edits.append((label, replace_text(path, operation["old"], operation["new"])))
            else:
                # int(): JSON Schema's integer takes 2.0 too
                start, end = int(operation["start_line"]), int(operation["end_line"])
                edits.append((label, replace_lines(path, start, end, operation["content"])))
        return edits
    patch_edits: list[tuple[str, Edit]] = []
    for item in parse_patch(args["patch"]).operations:
        path = normalize(item.path, cwd)
        if isinstance(item, AddFile):
            patch_edits.append((f"add {item.path}", patch_add(path, item.text)))
        elif isinstance(item, DeleteFile):
            patch_edits.append((f"delete {item.path}", patch_delete(path)))
        else:
            move_to = normalize(item.move_to, cwd) if item.move_to is not None else None
            label = f"update {item.path}" + (f" -> {item.move_to}" if item.move_to else "")
            patch_edits.append((label, patch_update(path, item.hunks, move_to)))
    return patch_edits


def _plan(space: Workspace, edits: list[tuple[str, Edit]]) -> list[str | EditError]:
    outcomes: list[str | EditError] = []
    for index, (_, edit) in enumerate(edits):
        try:
            outcomes.append(edit(space, index))
        except EditError as error:
            outcomes.append(error)
    return outcomes


async def handler(args: Mapping[str, Any], context: ToolContext) -> BatchResult | dict[str, Any]:
    """Plan every entry, then commit them all; on any error nothing is written.

    Success returns one ``ok`` row per entry. Failure is a tool error whose rows say, per
    entry, its error or that it was not applied.
    """
    edits = _edits(args, str(context.cwd))
    space = Workspace(cwd=normalize(str(context.cwd), "/"))
    outcomes = await anyio.to_thread.run_sync(_plan, space, edits, abandon_on_cancel=True)
    failed = any(isinstance(outcome, EditError) for outcome in outcomes)
    summary = "nothing was written: an entry cannot apply. Fix it and send the whole call again.\n"
    if not failed:
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(space.commit)
            except EditError as error:
                outcomes[error.entry if error.entry is not None else 0] = error
                failed = True
                if error.partial:
                    summary = "the call stopped part-way: see the failed entry.\n"
    batch = BatchResult()
    for (label, _), outcome in zip(edits, outcomes, strict=True):
        if isinstance(outcome, EditError):
            batch.error(label, outcome.code, outcome.message)
        elif failed:
            batch.skipped(label, f"not applied (another entry failed); it would have: {outcome}")
        else:
            batch.ok(label, outcome)
    if not failed:
        return batch
    _, rows, _ = batch.render(context.max_output_bytes)
    return {"content": [{"type": "text", "text": summary + rows}], "is_error": True}

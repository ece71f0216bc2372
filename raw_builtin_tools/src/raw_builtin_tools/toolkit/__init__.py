"""The helpers the built-in tools are made of, as a stable API for forks.

``raw tools fork`` copies a built-in tool's folder out of this distribution; the copy keeps
importing what the original imports. Every built-in tool imports only two things: names
from ``raw_core`` itself (its ``__all__``) and names from this package. So a fork keeps
working when ``raw-builtin-tools`` is upgraded, as long as this package keeps its promise:

* **What is stable:** every name in ``raw_builtin_tools.toolkit.__all__``, imported from
  ``raw_builtin_tools.toolkit`` itself, with the signature and behaviour its docstring
  documents (including the error codes a model reads). A release may add names, optional
  keyword parameters and new error codes.
* **What may change:** which submodule (``lines``, ``paths``, ``patch``, ``hunks``, ``atomic``,
  ``workspace``, ``edits``, ``processes``, ``background``, ``output_log``, ``images``,
  ``shell``, ``shell_parser``, ``shell_prefixes``, ``shell_records``, ``shell_words``,
  ``wrappers``) defines a name, anything
  not in ``__all__``, anything named with a leading underscore, and the modules named
  with one anywhere in ``raw_builtin_tools``. Import from the package, not from a
  submodule.
* **How it changes:** a name in ``__all__`` is removed, renamed or changed incompatibly
  only in a release whose version says so (a new major version; before 1.0, a new minor
  version), and the release notes name it.

The parts, by what a tool needs them for:

* lines as an editor counts them: :func:`split_lines`, :func:`join_lines`, and
  :func:`surrogate_problem` for text that cannot be written as UTF-8;
* the paths a call names: :func:`normalize` (absolute and lexical, reading nothing, as the
  intended effects need) and :func:`path_problem`;
* the ``*** Begin Patch`` format: :func:`parse_patch`, :func:`render_patch`,
  :func:`apply_hunks` and the types :class:`Patch`, :class:`AddFile`, :class:`DeleteFile`,
  :class:`UpdateFile`, :class:`Hunk`, with :class:`PatchSyntaxError` and
  :class:`HunkMismatch`;
* atomic file replacement: :func:`write_atomic`, or :func:`stage` then
  :meth:`Staged.commit` for several files;
* all-or-nothing edits of several files: a :class:`Workspace` plans every :data:`Edit`
  (:func:`overwrite`, :func:`append`, :func:`replace_text`, :func:`replace_lines`,
  :func:`patch_add`, :func:`patch_delete`, :func:`patch_update`) and commits them together,
  or raises :class:`EditError`;
* what a Bash command line would do: :func:`parse_command` reads it (tree-sitter-bash)
  into a :class:`ShellCommand`, the :class:`Program` entries it would run (through the
  :data:`COMMAND_WRAPPERS`) and the files its redirections write, with
  :data:`COMMAND_FLAGS` for what it cannot know, within :data:`MAX_COMMAND_BYTES`,
  :data:`MAX_COMMAND_NODES`, :data:`MAX_COMMAND_DEPTH`, :data:`MAX_COMMAND_PROGRAMS` and
  :data:`MAX_PARSE_SECONDS`; :func:`commands_effects` gives the intended effects of the
  lines of one call under one budget (:data:`CALL_BYTES`, :data:`CALL_NODES`,
  :data:`CALL_PARSE_SECONDS`), in the shape builtin/bash and builtin/process declare;
* commands: :func:`run_command` runs one in a process group of its own with a deadline, a
  cancellation :class:`Signal` and bounded :class:`Capture` of its output, and returns an
  :class:`Outcome`; :func:`kill_group` kills such a group;
* processes that outlive a call: a :class:`ProcessTable` (at most :data:`MAX_PROCESSES`)
  of :class:`BackgroundProcess` entries, each in a process group of its own with its
  output in a bounded :class:`OutputLog` (:data:`OUTPUT_BYTES` on disk, read as
  :class:`OutputChunk` pieces) under :func:`process_state_dir`; an action that cannot be
  done raises :class:`ProcessProblem` with a stable code;
* images: :func:`read_image` checks a PNG or JPEG by its content, within
  :data:`MAX_IMAGE_BYTES` and :data:`MAX_IMAGE_SIDE`, into an :class:`ImageFile`, or
  raises :class:`ImageProblem`.

Each name is imported from its submodule the first time it is used (PEP 562): importing
the package imports none of its submodules, so a tool that uses two helpers pays for the
modules that define them alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_builtin_tools.toolkit.atomic import Staged, stage, write_atomic
    from raw_builtin_tools.toolkit.background import (
        MAX_PROCESSES,
        STOP_GRACE_SECONDS,
        BackgroundProcess,
        ProcessProblem,
        ProcessTable,
        process_state_dir,
    )
    from raw_builtin_tools.toolkit.edits import (
        Edit,
        append,
        overwrite,
        patch_add,
        patch_delete,
        patch_update,
        replace_lines,
        replace_text,
    )
    from raw_builtin_tools.toolkit.hunks import apply_hunks
    from raw_builtin_tools.toolkit.images import (
        MAX_IMAGE_BYTES,
        MAX_IMAGE_SIDE,
        ImageFile,
        ImageProblem,
        read_image,
    )
    from raw_builtin_tools.toolkit.lines import join_lines, split_lines, surrogate_problem
    from raw_builtin_tools.toolkit.output_log import (
        OUTPUT_BYTES,
        SEGMENT_BYTES,
        OutputChunk,
        OutputLog,
    )
    from raw_builtin_tools.toolkit.patch import (
        MAX_OPERATIONS,
        AddFile,
        DeleteFile,
        Hunk,
        HunkMismatch,
        LineKind,
        Operation,
        Patch,
        PatchSyntaxError,
        UpdateFile,
        parse_patch,
        render_patch,
    )
    from raw_builtin_tools.toolkit.paths import normalize, path_problem
    from raw_builtin_tools.toolkit.processes import (
        Capture,
        Outcome,
        Signal,
        kill_group,
        run_command,
    )
    from raw_builtin_tools.toolkit.shell import parse_command
    from raw_builtin_tools.toolkit.shell_effects import (
        CALL_BYTES,
        CALL_NODES,
        CALL_PARSE_SECONDS,
        commands_effects,
    )
    from raw_builtin_tools.toolkit.shell_records import (
        COMMAND_FLAGS,
        MAX_COMMAND_BYTES,
        MAX_COMMAND_DEPTH,
        MAX_COMMAND_NODES,
        MAX_COMMAND_PROGRAMS,
        MAX_PARSE_SECONDS,
        Program,
        ShellCommand,
    )
    from raw_builtin_tools.toolkit.workspace import EditError, Workspace
    from raw_builtin_tools.toolkit.wrappers import COMMAND_WRAPPERS

_EXPORTS: dict[str, str] = {
    "AddFile": "raw_builtin_tools.toolkit.patch",
    "BackgroundProcess": "raw_builtin_tools.toolkit.background",
    "CALL_BYTES": "raw_builtin_tools.toolkit.shell_effects",
    "CALL_NODES": "raw_builtin_tools.toolkit.shell_effects",
    "CALL_PARSE_SECONDS": "raw_builtin_tools.toolkit.shell_effects",
    "COMMAND_FLAGS": "raw_builtin_tools.toolkit.shell_records",
    "COMMAND_WRAPPERS": "raw_builtin_tools.toolkit.wrappers",
    "Capture": "raw_builtin_tools.toolkit.processes",
    "DeleteFile": "raw_builtin_tools.toolkit.patch",
    "Edit": "raw_builtin_tools.toolkit.edits",
    "EditError": "raw_builtin_tools.toolkit.workspace",
    "Hunk": "raw_builtin_tools.toolkit.patch",
    "HunkMismatch": "raw_builtin_tools.toolkit.patch",
    "ImageFile": "raw_builtin_tools.toolkit.images",
    "ImageProblem": "raw_builtin_tools.toolkit.images",
    "LineKind": "raw_builtin_tools.toolkit.patch",
    "MAX_COMMAND_BYTES": "raw_builtin_tools.toolkit.shell_records",
    "MAX_COMMAND_DEPTH": "raw_builtin_tools.toolkit.shell_records",
    "MAX_COMMAND_NODES": "raw_builtin_tools.toolkit.shell_records",
    "MAX_COMMAND_PROGRAMS": "raw_builtin_tools.toolkit.shell_records",
    "MAX_IMAGE_BYTES": "raw_builtin_tools.toolkit.images",
    "MAX_IMAGE_SIDE": "raw_builtin_tools.toolkit.images",
    "MAX_OPERATIONS": "raw_builtin_tools.toolkit.patch",
    "MAX_PARSE_SECONDS": "raw_builtin_tools.toolkit.shell_records",
    "MAX_PROCESSES": "raw_builtin_tools.toolkit.background",
    "OUTPUT_BYTES": "raw_builtin_tools.toolkit.output_log",
    "Operation": "raw_builtin_tools.toolkit.patch",
    "Outcome": "raw_builtin_tools.toolkit.processes",
    "OutputChunk": "raw_builtin_tools.toolkit.output_log",
    "OutputLog": "raw_builtin_tools.toolkit.output_log",
    "Patch": "raw_builtin_tools.toolkit.patch",
    "PatchSyntaxError": "raw_builtin_tools.toolkit.patch",
    "ProcessProblem": "raw_builtin_tools.toolkit.background",
    "ProcessTable": "raw_builtin_tools.toolkit.background",
    "Program": "raw_builtin_tools.toolkit.shell_records",
    "SEGMENT_BYTES": "raw_builtin_tools.toolkit.output_log",
    "STOP_GRACE_SECONDS": "raw_builtin_tools.toolkit.background",
    "ShellCommand": "raw_builtin_tools.toolkit.shell_records",
    "Signal": "raw_builtin_tools.toolkit.processes",
    "Staged": "raw_builtin_tools.toolkit.atomic",
    "UpdateFile": "raw_builtin_tools.toolkit.patch",
    "Workspace": "raw_builtin_tools.toolkit.workspace",
    "append": "raw_builtin_tools.toolkit.edits",
    "apply_hunks": "raw_builtin_tools.toolkit.hunks",
    "commands_effects": "raw_builtin_tools.toolkit.shell_effects",
    "join_lines": "raw_builtin_tools.toolkit.lines",
    "kill_group": "raw_builtin_tools.toolkit.processes",
    "normalize": "raw_builtin_tools.toolkit.paths",
    "overwrite": "raw_builtin_tools.toolkit.edits",
    "parse_command": "raw_builtin_tools.toolkit.shell",
    "parse_patch": "raw_builtin_tools.toolkit.patch",
    "patch_add": "raw_builtin_tools.toolkit.edits",
    "patch_delete": "raw_builtin_tools.toolkit.edits",
    "patch_update": "raw_builtin_tools.toolkit.edits",
    "path_problem": "raw_builtin_tools.toolkit.paths",
    "process_state_dir": "raw_builtin_tools.toolkit.background",
    "read_image": "raw_builtin_tools.toolkit.images",
    "render_patch": "raw_builtin_tools.toolkit.patch",
    "replace_lines": "raw_builtin_tools.toolkit.edits",
    "replace_text": "raw_builtin_tools.toolkit.edits",
    "run_command": "raw_builtin_tools.toolkit.processes",
    "split_lines": "raw_builtin_tools.toolkit.lines",
    "stage": "raw_builtin_tools.toolkit.atomic",
    "surrogate_problem": "raw_builtin_tools.toolkit.lines",
    "write_atomic": "raw_builtin_tools.toolkit.atomic",
}
"""Each public name -> the submodule that defines it."""

__all__ = [
    "CALL_BYTES",
    "CALL_NODES",
    "CALL_PARSE_SECONDS",
    "COMMAND_FLAGS",
    "COMMAND_WRAPPERS",
    "MAX_COMMAND_BYTES",
    "MAX_COMMAND_DEPTH",
    "MAX_COMMAND_NODES",
    "MAX_COMMAND_PROGRAMS",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "MAX_OPERATIONS",
    "MAX_PARSE_SECONDS",
    "MAX_PROCESSES",
    "OUTPUT_BYTES",
    "SEGMENT_BYTES",
    "STOP_GRACE_SECONDS",
    "AddFile",
    "BackgroundProcess",
    "Capture",
    "DeleteFile",
    "Edit",
    "EditError",
    "Hunk",
    "HunkMismatch",
    "ImageFile",
    "ImageProblem",
    "LineKind",
    "Operation",
    "Outcome",
    "OutputChunk",
    "OutputLog",
    "Patch",
    "PatchSyntaxError",
    "ProcessProblem",
    "ProcessTable",
    "Program",
    "ShellCommand",
    "Signal",
    "Staged",
    "UpdateFile",
    "Workspace",
    "append",
    "apply_hunks",
    "commands_effects",
    "join_lines",
    "kill_group",
    "normalize",
    "overwrite",
    "parse_command",
    "parse_patch",
    "patch_add",
    "patch_delete",
    "patch_update",
    "path_problem",
    "process_state_dir",
    "read_image",
    "render_patch",
    "replace_lines",
    "replace_text",
    "run_command",
    "split_lines",
    "stage",
    "surrogate_problem",
    "write_atomic",
]


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

"""Every error raw raises, in one tree, each with a stable snake_case ``code``.

The tree::

    RawError
    ├── ManifestError                 a tool folder cannot become a tool
    │   ├── ManifestInvalid           manifest_invalid
    │   ├── ToolPathOutsideRoot       tool_path_outside_root
    │   ├── ToolImportFailed          tool_import_failed
    │   └── ToolEntryInvalid          tool_entry_invalid
    ├── SelectionError                an agent's tools.use cannot be satisfied
    │   ├── ToolNotFound              tool_not_found
    │   ├── ToolSourceUnavailable     tool_source_unavailable
    │   ├── ToolNameConflict          tool_name_conflict
    │   ├── ToolSelectedTwice         tool_selected_twice
    │   └── McpServerFailed           mcp_server_failed
    ├── PackageError                  a package cannot be installed, found or used
    │   ├── PackageInvalid            package_invalid
    │   ├── PackageUnsafe             package_unsafe
    │   ├── PackageNotFound           package_not_found
    │   ├── PackageAliasTaken         package_alias_taken
    │   ├── PackageDamaged            package_damaged
    │   ├── PackageIndexInvalid       package_index_invalid
    │   └── PackageStoreUnavailable   package_store_unavailable
    ├── ConfigError                   a config file cannot be used
    │   ├── ConfigNotFound            config_not_found
    │   ├── ConfigInvalid             config_invalid
    │   ├── ConfigUntrusted           config_untrusted
    │   └── ConfigExists              config_exists
    ├── ResourceError                 a skill or variable the agent asked for is refused
    │   ├── SkillNotSelected          skill_not_selected
    │   ├── VarNotSelected            var_not_selected
    │   └── VarUnavailable            var_unavailable
    ├── HookError                     a command hook folder cannot become a hook
    │   ├── HookInvalid               hook_invalid
    │   └── HookNotFound              hook_not_found
    ├── PluginError                   a plug-in cannot be loaded
    │   ├── PluginInvalid             plugin_invalid
    │   └── PluginConflict            plugin_conflict
    ├── DispatchError                 a tool call ended without a result from its handler
    │   ├── ToolUnknown               tool_unknown
    │   ├── ToolNotExposed            tool_not_exposed
    │   ├── InvalidArguments          invalid_arguments
    │   ├── EffectsInvalid            effects_invalid
    │   ├── Denied                    denied
    │   ├── HookDenied                hook_denied
    │   ├── HookFailed                hook_failed
    │   ├── ResultWithheld            result_withheld
    │   ├── ApprovalDenied            approval_denied
    │   ├── ApprovalUnavailable       approval_unavailable
    │   ├── HandlerError              handler_error
    │   ├── ToolError                 tool_error
    │   ├── Cancelled                 cancelled
    │   ├── Timeout                   timeout
    │   ├── McpToolChanged            mcp_tool_changed
    │   └── MaxStepsReached           max_steps
    ├── ProviderError                 a model request failed
    │   ├── AuthFailed                auth_failed
    │   ├── RateLimited               rate_limited
    │   ├── ContextTooLong            context_too_long
    │   ├── ProviderUnavailable       provider_unavailable
    │   └── ProviderFailed            provider_error
    ├── PanelError                    a panel update or read is refused (raw.panel/2)
    │   ├── PanelInvalid              panel_invalid
    │   ├── PanelTooLarge             panel_too_large
    │   ├── PanelUndeclared           panel_undeclared
    │   ├── PanelNotOwned             panel_not_owned
    │   ├── PanelUnknown              panel_unknown
    │   ├── PanelRevisionConflict     panel_revision_conflict
    │   ├── PanelRateLimited          panel_rate_limited
    │   ├── PanelLimit                panel_limit
    │   └── PanelClosedContext        panel_closed_context
    ├── InteractionError              a question for the user cannot be asked or answered
    │   ├── InteractionUnavailable    interaction_unavailable
    │   ├── InteractionExpired        interaction_expired
    │   └── AnswerInvalid             answer_invalid
    ├── LoopError                     the agent loop refuses an operation
    │   ├── TurnInProgress            turn_in_progress
    │   └── InternalError             internal_error
    └── StoreError                    the session store refuses an operation
        ├── SessionNotFound           session_not_found
        ├── SessionExpired            session_expired
        ├── SessionLocked             session_locked
        ├── StoreCorrupt              store_corrupt
        ├── StoreTooNew               store_too_new
        ├── StorageFull               storage_full
        ├── StoreUnavailable          store_unavailable
        ├── InvalidCursor             invalid_cursor
        ├── RequestNotFound           request_not_found
        └── RequestNotPending         request_not_pending

Foreign exceptions (cattrs, fastjsonschema, re2, sqlite3, importlib) are translated into
these at one seam each, with ``raise ... from exc``. ``docs/reference/errors.md`` has one
section per code; a test fails when the two disagree.

Why this module is longer than the rest (about 860 lines): it is the one error tree, by
design — every stable code in one place, each a small class with its docstring, so that
the tree above, the classes and the reference page can be checked against each other;
split by area, it would scatter what a reader looks up together.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AnswerInvalid",
    "ApprovalDenied",
    "ApprovalUnavailable",
    "AuthFailed",
    "Cancelled",
    "ConfigError",
    "ConfigExists",
    "ConfigInvalid",
    "ConfigNotFound",
    "ConfigUntrusted",
    "ContextTooLong",
    "Denied",
    "DispatchError",
    "EffectsInvalid",
    "HandlerError",
    "HookDenied",
    "HookError",
    "HookFailed",
    "HookInvalid",
    "HookNotFound",
    "InteractionError",
    "InteractionExpired",
    "InteractionUnavailable",
    "InternalError",
    "InvalidArguments",
    "InvalidCursor",
    "LoopError",
    "ManifestError",
    "ManifestInvalid",
    "MaxStepsReached",
    "McpServerFailed",
    "McpToolChanged",
    "PackageAliasTaken",
    "PackageDamaged",
    "PackageError",
    "PackageIndexInvalid",
    "PackageInvalid",
    "PackageNotFound",
    "PackageStoreUnavailable",
    "PackageUnsafe",
    "PanelClosedContext",
    "PanelError",
    "PanelInvalid",
    "PanelLimit",
    "PanelNotOwned",
    "PanelRateLimited",
    "PanelRevisionConflict",
    "PanelTooLarge",
    "PanelUndeclared",
    "PanelUnknown",
    "PluginConflict",
    "PluginError",
    "PluginInvalid",
    "ProviderError",
    "ProviderFailed",
    "ProviderUnavailable",
    "RateLimited",
    "RawError",
    "RequestNotFound",
    "RequestNotPending",
    "ResourceError",
    "ResultWithheld",
    "SelectionError",
    "SessionExpired",
    "SessionLocked",
    "SessionNotFound",
    "SkillNotSelected",
    "StorageFull",
    "StoreCorrupt",
    "StoreError",
    "StoreTooNew",
    "StoreUnavailable",
    "Timeout",
    "ToolEntryInvalid",
    "ToolError",
    "ToolImportFailed",
    "ToolNameConflict",
    "ToolNotExposed",
    "ToolNotFound",
    "ToolPathOutsideRoot",
    "ToolSelectedTwice",
    "ToolSourceUnavailable",
    "ToolUnknown",
    "TurnInProgress",
    "UsageInvalid",
    "VarNotSelected",
    "VarUnavailable",
    "all_error_classes",
]


class RawError(Exception):
    """Base of every error raw raises on purpose.

    ``code`` is stable and machine-readable; ``message`` says what was expected and what was
    found. Keyword context (``field``: a JSON path such as ``$.panels[0].id``, ``tool``: a tool
    identity or folder, ``rule``: a rule index, ...) travels with the error and appears in
    :meth:`to_dict`.
    """

    code: ClassVar[str] = "raw_error"
    model_text: ClassVar[str | None] = None
    """What a model reads instead of ``message`` when the error ends a tool call, for
    errors whose message holds host-side text (spec 004: configuration and approval text
    stay on the host side); ``None``: the message itself."""

    def __init__(self, message: str, *, for_model: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self._for_model = for_model
        self.context: dict[str, Any] = {k: v for k, v in context.items() if v is not None}

    @property
    def for_model(self) -> str | None:
        """What a person or a hook wrote for the model (``for_model=``), if anything."""
        return self._for_model

    @property
    def model_message(self) -> str:
        """The text a model reads when this error ends a tool call: what a person or a hook
        wrote for the model (``for_model=``), else the class's plain sentence, else the
        message."""
        if self._for_model is not None:
            return self._for_model
        return self.model_text if self.model_text is not None else self.message

    @property
    def field(self) -> str | None:
        """The JSON path of the offending field, when there is one."""
        value = self.context.get("field")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: ``{"code", "message", ...context}``."""
        return {"code": self.code, "message": self.message, **self.context}

    def __str__(self) -> str:
        where = self.context.get("field")
        return f"{self.code}: {self.message}" + (f" (at {where})" if where else "")


# --- loading a tool folder -------------------------------------------------------------


class ManifestError(RawError):
    """A tool folder cannot become a loaded tool."""

    code = "manifest_error"


class ManifestInvalid(ManifestError):
    """tool.json breaks a rule of the manifest (a field, a schema, a panel declaration)."""

    code = "manifest_invalid"


class ToolPathOutsideRoot(ManifestError):
    """A tool folder, manifest or entry is a link (or path) leading outside the tool's root."""

    code = "tool_path_outside_root"


class ToolImportFailed(ManifestError):
    """The entry module raised while it was imported."""

    code = "tool_import_failed"


class ToolEntryInvalid(ManifestError):
    """The entry module imported but does not export what the manifest requires."""

    code = "tool_entry_invalid"


# --- selecting tools for an agent ------------------------------------------------------


class SelectionError(RawError):
    """An agent's ``tools.use`` cannot be satisfied."""

    code = "selection_error"


class ToolNotFound(SelectionError):
    """The identity names a folder or plug-in tool that does not exist."""

    code = "tool_not_found"


class ToolSourceUnavailable(SelectionError):
    """The identity's source (``mcp/``, ``pkg/``) has no resolver in this installation."""

    code = "tool_source_unavailable"


class ToolNameConflict(SelectionError):
    """Two selected tools have the same model-facing name."""

    code = "tool_name_conflict"


class ToolSelectedTwice(SelectionError):
    """The same identity, or the same folder under two identities, is selected twice."""

    code = "tool_selected_twice"


class McpServerFailed(SelectionError):
    """An MCP server cannot be used: it did not start, did not answer in time, failed to
    list its tools, or died. At load time the agent does not load; in a call the call ends
    with this error (the next call starts the server again, once)."""

    code = "mcp_server_failed"


# --- packages --------------------------------------------------------------------------


class PackageError(RawError):
    """A package cannot be installed, found or used (``raw pkg``, ``pkg/`` identities)."""

    code = "package_error"


class PackageInvalid(PackageError):
    """The source is no package: not a folder or tar archive, ``raw-package.json`` missing
    or breaking a rule (``field`` is its JSON path), or an exported tool folder that the
    loader's rules refuse."""

    code = "package_invalid"


class PackageUnsafe(PackageError):
    """An archive member or folder entry raw refuses to unpack: an absolute name, ``..``,
    a link leading outside, a device or FIFO, or more members or bytes than the limits."""

    code = "package_unsafe"


class PackageNotFound(PackageError):
    """``raw pkg show`` or ``remove``: no package is installed under the alias in the index
    beside the config file. (A ``pkg/`` identity naming such an alias is
    ``tool_not_found``, as every identity a source does not have.)"""

    code = "package_not_found"


class PackageAliasTaken(PackageError):
    """The alias already names other content in the index; ``--force`` replaces it."""

    code = "package_alias_taken"


class PackageDamaged(PackageError):
    """A store entry's files no longer match its hash (changed or removed)."""

    code = "package_damaged"


class PackageIndexInvalid(PackageError):
    """``raw-packages.json`` (or raw's list of indexes) is not a file raw wrote."""

    code = "package_index_invalid"


class PackageStoreUnavailable(PackageError):
    """raw cannot make, lock or write the files of packages: the store folder in the data
    directory, its lock, raw's list of indexes, or the index beside the config file (a
    file where a folder should be, no permission, a read-only file system)."""

    code = "package_store_unavailable"


# --- config ----------------------------------------------------------------------------


class UsageInvalid(RawError):
    """A command line raw's CLI cannot run: an unknown command or option, a missing or
    malformed argument."""

    code = "usage_invalid"


class ConfigError(RawError):
    """A config file cannot be used."""

    code = "config_error"


class ConfigNotFound(ConfigError):
    """The config file does not exist or cannot be read."""

    code = "config_not_found"


class ConfigInvalid(ConfigError):
    """The config file is not valid JSON, or a field breaks a rule."""

    code = "config_invalid"


class ConfigUntrusted(ConfigError):
    """A ``raw.json`` found in the working directory, in a folder the user has not trusted."""

    code = "config_untrusted"


class ConfigExists(ConfigError):
    """``raw config init`` refuses to overwrite an existing file."""

    code = "config_exists"


# --- skills and variables ----------------------------------------------------------------


class ResourceError(RawError):
    """A skill or variable the agent asked for is refused."""

    code = "resource_error"


class SkillNotSelected(ResourceError):
    """The agent did not select a skill of that name."""

    code = "skill_not_selected"


class VarNotSelected(ResourceError):
    """The agent did not select a variable of that name."""

    code = "var_not_selected"


class VarUnavailable(ResourceError):
    """A variable's value cannot be read: its environment variable is unset, its file is
    missing, or its command failed or timed out."""

    code = "var_unavailable"


# --- command hooks ---------------------------------------------------------------------


class HookError(RawError):
    """A command hook an agent selects cannot be loaded."""

    code = "hook_error"


class HookInvalid(HookError):
    """A hook folder breaks a rule: ``hook.json`` (``field`` is its JSON path), or a path
    (the folder, ``hook.json``, the command's ``./`` program) that leads outside its root."""

    code = "hook_invalid"


class HookNotFound(HookError):
    """A hook ``hooks.use`` selects has no folder where its identity says it lives."""

    code = "hook_not_found"


# --- plug-ins ----------------------------------------------------------------------------


class PluginError(RawError):
    """A plug-in cannot be loaded."""

    code = "plugin_error"


class PluginInvalid(PluginError):
    """A plug-in failed to import, or a registration hook returned something unusable."""

    code = "plugin_invalid"


class PluginConflict(PluginError):
    """Two plug-ins claim one name, or a plug-in takes a reserved source name."""

    code = "plugin_conflict"


# --- dispatch --------------------------------------------------------------------------


class DispatchError(RawError):
    """A tool call ended without a result from its handler; it becomes an error result."""

    code = "dispatch_error"


class ToolUnknown(DispatchError):
    """No selected tool has the called name."""

    code = "tool_unknown"


class ToolNotExposed(DispatchError):
    """The tool is selected but an unconditional deny hides it from the model."""

    code = "tool_not_exposed"
    model_text = "this tool is not offered to you: the user's policy hides it"


class InvalidArguments(DispatchError):
    """The arguments are not strict JSON, break the input schema, or validate_args refused."""

    code = "invalid_arguments"


class EffectsInvalid(DispatchError):
    """describe_effects raised, returned an awaitable, or returned effects that break the
    effects_schema."""

    code = "effects_invalid"


class Denied(DispatchError):
    """A deny rule of the policy decided the call."""

    code = "denied"
    model_text = "a rule of the user's policy denies this call"


class HookDenied(DispatchError):
    """A PreToolUse hook (a plug-in's check hook or a command hook) denied the call, or a
    UserPromptSubmit command hook blocked a prompt; the hook's reason reaches the model."""

    code = "hook_denied"
    model_text = "a check the user set up denies this call"


class HookFailed(DispatchError):
    """A hook raised, crashed, timed out or answered something that is not a decision (a
    command hook: an exit code other than 0 and 2, output that is not its protocol, a
    request to change the arguments); the call or prompt fails closed."""

    code = "hook_failed"
    model_text = "a check the user set up failed, so the call did not run"


class ResultWithheld(DispatchError):
    """The handler ran and a PostToolUse command hook (or a plug-in's call middleware)
    withheld its result from the model; the model reads that the tool ran and why the
    result was withheld."""

    code = "result_withheld"
    model_text = "a check the user set up withheld this result"


class ApprovalDenied(DispatchError):
    """The approval callback refused the call (or failed)."""

    code = "approval_denied"
    model_text = "the user declined this call"


class ApprovalUnavailable(DispatchError):
    """The call needs approval and nobody can be asked (a non-interactive run)."""

    code = "approval_unavailable"
    model_text = "this call needs the user's approval, and nobody could be asked"


class HandlerError(DispatchError):
    """The handler raised, or returned something that is not a tool result."""

    code = "handler_error"


class ToolError(DispatchError):
    """The handler ran and reported an error in its own result (``"is_error": true``)."""

    code = "tool_error"


class Cancelled(DispatchError):
    """The call was cancelled before it finished."""

    code = "cancelled"


class Timeout(DispatchError):
    """The handler ran past its deadline."""

    code = "timeout"


class McpToolChanged(DispatchError):
    """An MCP tool's definition (name, description or input schema) changed on its server
    after the session loaded it: the call is refused, because the model was shown the old
    definition (a tool that changes under the user is how MCP tool poisoning works). The
    session's next start loads the new definition as a runtime change."""

    code = "mcp_tool_changed"


class MaxStepsReached(DispatchError):
    """The turn reached ``max_steps`` after the model asked for this call, so it never ran."""

    code = "max_steps"


# --- model providers -------------------------------------------------------------------


class ProviderError(RawError):
    """A model request failed. Context: ``status`` (the HTTP status, when there was one),
    ``retry_after`` (seconds, when the service said), ``provider``."""

    code = "provider_error_base"


class AuthFailed(ProviderError):
    """The service refused the credential (HTTP 401/403)."""

    code = "auth_failed"


class RateLimited(ProviderError):
    """The service asked raw to slow down (HTTP 429); ``retry_after`` when it said."""

    code = "rate_limited"


class ContextTooLong(ProviderError):
    """The request is longer than the model's context window."""

    code = "context_too_long"


class ProviderUnavailable(ProviderError):
    """The service could not be reached, timed out, or is overloaded (HTTP 5xx)."""

    code = "provider_unavailable"


class ProviderFailed(ProviderError):
    """Any other failure of a model request, including a malformed response stream."""

    code = "provider_error"


# --- interaction requests ----------------------------------------------------------------


class InteractionError(RawError):
    """A tool's question for the user (``context.interactions.request``) cannot be asked,
    or an answer to it is refused."""

    code = "interaction_error"


class InteractionUnavailable(InteractionError):
    """Nobody can answer: the run is piped or non-interactive and no other front end waits
    for the session's requests. Raised at once, without waiting."""

    code = "interaction_unavailable"


class InteractionExpired(InteractionError):
    """Nobody answered the request before its deadline (``timeout_ms``, 30 minutes by
    default); context ``request_id``."""

    code = "interaction_expired"


class AnswerInvalid(InteractionError):
    """An answer does not fit the request's form (an unknown field, a missing required one,
    a value that is not an option, too few or too many choices) or the request's kind;
    ``field`` is the first offending field's path, ``errors`` lists each one as ``{field,
    message}``. The request stays pending."""

    code = "answer_invalid"


# --- panels (raw.panel/2) ----------------------------------------------------------------


class PanelError(RawError):
    """A panel update or read is refused. Context: ``panel`` (the name as given), ``tool``
    (the identity of the calling tool). In a result block it never fails the call: the
    model reads ``panel <id> update rejected: <code> <message>``."""

    code = "panel_error"


class PanelInvalid(PanelError):
    """The update is malformed (an unknown op, a missing or extra field), a patch cannot be
    applied, or the document breaks the block catalog (an unknown block, a block that fails
    its schema); ``field`` is the JSON path of the offending part."""

    code = "panel_invalid"


class PanelTooLarge(PanelError):
    """The document, as compact JSON, is larger than 64 KiB."""

    code = "panel_too_large"


class PanelUndeclared(PanelError):
    """The calling tool's manifest declares no panel with that id."""

    code = "panel_undeclared"


class PanelNotOwned(PanelError):
    """The update or action names a panel of another tool (``<identity>:<id>``); panels are
    keyed in the session by tool identity and panel id."""

    code = "panel_not_owned"


class PanelUnknown(PanelError):
    """A patch, a close or a read of a panel that was never opened in the session (or that
    was closed, for a patch, or evicted)."""

    code = "panel_unknown"


class PanelRevisionConflict(PanelError):
    """A patch named the revision it expects and the panel is at another one. Context:
    ``expected``, ``revision``."""

    code = "panel_revision_conflict"


class PanelRateLimited(PanelError):
    """More than 200 updates of one panel in one call (rejected updates count too)."""

    code = "panel_rate_limited"


class PanelLimit(PanelError):
    """Opening the panel would make more than 16 panels in the session and none of them is
    closed (a closed panel is evicted to make room)."""

    code = "panel_limit"


class PanelClosedContext(PanelError):
    """``context.panels`` was used after the tool call that owned it ended."""

    code = "panel_closed_context"


# --- the agent loop ----------------------------------------------------------------------


class LoopError(RawError):
    """The agent loop refuses an operation."""

    code = "loop_error"


class TurnInProgress(LoopError):
    """A session runs one turn at a time; another turn is running."""

    code = "turn_in_progress"


class InternalError(LoopError):
    """raw or a plug-in failed in a way it should not (a bug); the turn ended cleanly."""

    code = "internal_error"


# --- the session store -----------------------------------------------------------------


class StoreError(RawError):
    """The session store refuses an operation."""

    code = "store_error"


class SessionNotFound(StoreError):
    """No session has the given id (or it expired and was pruned)."""

    code = "session_not_found"


class SessionExpired(StoreError):
    """The session expired (no conversation activity for the store's expiry time): it is
    not listed and cannot be read or resumed. Context: ``session_id``, ``expired_at``
    (ISO 8601)."""

    code = "session_expired"


class SessionLocked(StoreError):
    """Another writer holds the session."""

    code = "session_locked"


class StoreCorrupt(StoreError):
    """The database file is not a usable raw session store."""

    code = "store_corrupt"


class StoreTooNew(StoreError):
    """The database was written by a newer raw; it is refused and left untouched."""

    code = "store_too_new"


class StorageFull(StoreError):
    """The disk is full; the operation was rolled back and nothing committed was lost."""

    code = "storage_full"


class StoreUnavailable(StoreError):
    """The store's location or SQLite itself failed (not a folder, no WAL support, an I/O
    error, another connection kept it busy past the timeout); nothing was changed."""

    code = "store_unavailable"


class InvalidCursor(StoreError):
    """A display-history cursor that this store did not issue for this session and order."""

    code = "invalid_cursor"


def all_error_classes() -> list[type[RawError]]:
    """Every concrete error class (those whose code a caller can meet), in definition order."""
    found: list[type[RawError]] = []
    stack: list[type[RawError]] = [RawError]
    while stack:
        cls = stack.pop(0)
        subclasses = cls.__subclasses__()
        if not subclasses and cls is not RawError:
            found.append(cls)
        stack[0:0] = subclasses
    return found


class RequestNotFound(StoreError):
    """No pending request (approval, interaction) of any session has the given id."""

    code = "request_not_found"


class RequestNotPending(StoreError):
    """The request was already answered, expired or cancelled: the first answer stands."""

    code = "request_not_pending"

"""Every parser of outside JSON turns hostile input into its documented error code.

The config, a tool's ``tool.json``, a model's tool-call arguments and a replay recording
are fed random and hostile text (see :mod:`tests.hostile_json`); nothing but a
:class:`~raw_core.errors.RawError` of the parser's code may leave them, and a tool call
ends as ``invalid_arguments``, never ``handler_error``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_core.agent import load_agent
from raw_core.config import load_config, parse_config
from raw_core.config.discovery import trusted_folders
from raw_core.dispatch import Dispatcher
from raw_core.errors import RawError
from raw_core.plugins import PluginHost
from raw_core.policy import Policy
from raw_core.providers.contract import arguments_object
from raw_core.providers.scripted import ReplayProvider
from raw_core.tools.calls import ToolCall
from raw_core.tools.loader import ToolLoader
from raw_core.tools.manifest import parse_manifest
from tests.conftest import manifest_for
from tests.hostile_json import HOSTILE, as_bytes, hostile_bytes, hostile_texts, json_values

HOLE = "\x00HOLE\x00"

# Documents with one value replaced by hostile text: the parser gets past the JSON reader
# more often than with random text alone.
CONFIG_TEMPLATES = [
    '{"agents": {"a": {"tools": {"use": [' + HOLE + "]}}}}",
    '{"agents": {"a": {"max_steps": ' + HOLE + "}}}",
    '{"agents": {"a": {"tools": {"use": [], "rules": [{"match": "x", "effect": "ask",'
    ' "when": ' + HOLE + "}]}}}}",
    '{"models": {"m": {"provider": "replay", "model": ' + HOLE + "}}}",
    '{"sessions": ' + HOLE + "}",
    '{"vars": {"V": ' + HOLE + "}}",
    HOLE,
]

MANIFEST = json.dumps(manifest_for("sample"))
MANIFEST_TEMPLATES = [
    MANIFEST.replace('"1.0.0"', HOLE),
    MANIFEST.replace('"additionalProperties": false', '"additionalProperties": ' + HOLE),
    MANIFEST.replace('"properties": {}', '"properties": {"p": ' + HOLE + "}"),
    MANIFEST.replace('"entry"', '"panels": ' + HOLE + ', "entry"'),
    MANIFEST.replace('"entry"', '"effects_schema": ' + HOLE + ', "entry"'),
    HOLE,
]

RECORDING_TEMPLATES = [
    HOLE,
    '{"text": ' + HOLE + "}",
    '{"delay_ms": ' + HOLE + "}",
    '{"tool_calls": [{"name": "t", "arguments": ' + HOLE + "}]}",
    '{"tool_calls": ' + HOLE + "}",
]

fragments = st.one_of(hostile_texts, json_values.map(json.dumps))


def filled(templates: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(templates), fragments).map(lambda t: t[0].replace(HOLE, t[1]))


NAMED = [text for _, text in HOSTILE if isinstance(text, str)]


def every_filling(templates: list[str]) -> list[str]:
    """Each named hostile text in each template (deterministic, unlike the strategies)."""
    return [template.replace(HOLE, text) for template in templates for text in NAMED]


FEW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _raises_only(code: str, run: Any, *args: Any, **kwargs: Any) -> None:
    """Run the parser: it may succeed, or raise a RawError of ``code``; nothing else."""
    found = None
    try:
        run(*args, **kwargs)
    except RawError as exc:
        found = exc
    assert found is None or found.code == code, found.to_dict()


# --- the config --------------------------------------------------------------------------


@FEW
@given(filled(CONFIG_TEMPLATES))
def test_parse_config_raises_only_config_invalid(text: str) -> None:
    _raises_only("config_invalid", parse_config, text)


def test_each_named_hostile_value_in_a_config_is_config_invalid() -> None:
    for text in every_filling(CONFIG_TEMPLATES):
        _raises_only("config_invalid", parse_config, text)


@FEW
@given(hostile_bytes)
def test_a_config_file_of_any_bytes_is_config_invalid(data: bytes) -> None:
    _raises_only("config_invalid", parse_config, data)


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_each_hostile_config_file_is_config_invalid(
    name: str, text: str | bytes, tmp_path: Path
) -> None:
    path = tmp_path / "raw.json"
    path.write_bytes(as_bytes(text))
    with pytest.raises(RawError) as caught:
        load_config(path)
    assert caught.value.code == "config_invalid"
    assert caught.value.context["path"] == str(path)


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_a_hostile_trust_list_trusts_nothing(
    name: str, text: str | bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "trusted-folders.json").write_bytes(as_bytes(text))
    assert trusted_folders({"XDG_CONFIG_HOME": str(tmp_path)}) == []


# --- tool.json ---------------------------------------------------------------------------


@FEW
@given(filled(MANIFEST_TEMPLATES))
def test_parse_manifest_raises_only_manifest_invalid(text: str) -> None:
    _raises_only("manifest_invalid", parse_manifest, text, tool="sample")


def test_each_named_hostile_value_in_a_manifest_is_manifest_invalid() -> None:
    for text in every_filling(MANIFEST_TEMPLATES):
        _raises_only("manifest_invalid", parse_manifest, text, tool="sample")


@FEW
@given(hostile_bytes)
def test_a_manifest_of_any_bytes_is_manifest_invalid(data: bytes) -> None:
    _raises_only("manifest_invalid", parse_manifest, data)


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_each_hostile_tool_json_is_manifest_invalid(
    name: str, text: str | bytes, make_tool: Any, imported: Any
) -> None:
    folder = make_tool("sample")
    (folder / "tool.json").write_bytes(as_bytes(text))
    with pytest.raises(RawError) as caught:
        ToolLoader().load(folder)
    assert caught.value.code == "manifest_invalid"
    assert not imported(folder)


# --- tool-call arguments -----------------------------------------------------------------

ECHO = """
def handler(args, context):
    return {"content": [{"type": "text", "text": "ran"}]}
"""


@pytest.fixture(scope="module")
def dispatcher(tmp_path_factory: pytest.TempPathFactory) -> Dispatcher:
    """A tool that takes any object, under a rule whose condition reads the arguments."""
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "tools" / "probe"
    folder.mkdir(parents=True)
    (folder / "tool.json").write_text(
        json.dumps(
            manifest_for(
                "probe",
                input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
                condition_sources=["arguments"],
            )
        ),
        encoding="utf-8",
    )
    (folder / "tool.py").write_text(ECHO, encoding="utf-8")
    rule = {
        "match": "agent/probe",
        "effect": "ask",
        "when": {"source": "arguments", "any": "a", "regex": "^never$"},
    }
    config = root / "raw.json"
    config.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/probe"], "rules": [rule]}}}})
    )
    agent = load_agent(load_config(config), host=PluginHost())
    policy = Policy.bind(agent.config.tools.rules, agent.registry.tools)
    return Dispatcher(agent.registry, policy, cwd=str(root))


def _dispatch(dispatcher: Dispatcher, arguments: str) -> Any:
    return anyio.run(dispatcher.dispatch, ToolCall(id="c", name="probe", arguments=arguments))


@pytest.mark.parametrize(
    ("name", "text"),
    [(name, text) for name, text in HOSTILE if isinstance(text, str)],
    ids=[name for name, text in HOSTILE if isinstance(text, str)],
)
def test_each_hostile_argument_text_is_invalid_arguments(
    name: str, text: str, dispatcher: Dispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    result = _dispatch(dispatcher, text)
    assert result.code in (None, "invalid_arguments"), result
    assert not caplog.records  # no traceback logged


def test_a_huge_integer_argument_is_invalid_arguments(dispatcher: Dispatcher) -> None:
    result = _dispatch(dispatcher, '{"a": ' + "1" * 5000 + "}")
    assert result.code == "invalid_arguments"
    assert "5000 digits" in result.text()


ARGUMENT_TEMPLATES = [
    '{"a": ' + HOLE + "}",
    '{"b": ' + HOLE + "}",
    '{"a": "x", "b": [' + HOLE + "]}",
]
valid_arguments = st.builds(lambda a, b: json.dumps({"a": a, "b": b}), st.text(), json_values)


def test_each_named_hostile_value_in_the_arguments_is_invalid_arguments(
    dispatcher: Dispatcher,
) -> None:
    for text in every_filling(ARGUMENT_TEMPLATES):
        assert _dispatch(dispatcher, text).code in (None, "invalid_arguments"), text[:80]


@FEW
@given(st.one_of(hostile_texts, filled(ARGUMENT_TEMPLATES), valid_arguments))
def test_tool_call_arguments_end_as_ok_or_invalid_arguments(
    dispatcher: Dispatcher, text: str
) -> None:
    assert _dispatch(dispatcher, text).code in (None, "invalid_arguments")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "\\ud800", "b": [1]}', {"a": "\ud800", "b": [1]}),
        ("[1]", None),
        ('{"a": 1, "a": 2}', None),
        ('{"a": NaN}', None),
        ('{"a": 1e999}', None),
        ('{"a": ' + "1" * 5000 + "}", None),
        ("[" * 100_000 + "]" * 100_000, None),
        ('{"a": 1} x', None),
    ],
)
def test_arguments_object_reads_what_dispatch_reads(text: str, expected: Any) -> None:
    assert arguments_object(text) == expected


@given(st.one_of(hostile_texts, valid_arguments))
def test_arguments_object_never_raises(text: str) -> None:
    value = arguments_object(text)
    assert value is None or isinstance(value, dict)


# --- replay recordings -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_each_hostile_recording_is_config_invalid(
    name: str, text: str | bytes, tmp_path: Path
) -> None:
    path = tmp_path / "recording.jsonl"
    path.write_bytes(as_bytes(text))
    _raises_only("config_invalid", ReplayProvider.from_file, path)


def test_each_named_hostile_value_in_a_recording_is_config_invalid(tmp_path: Path) -> None:
    path = tmp_path / "recording.jsonl"
    for text in every_filling(RECORDING_TEMPLATES):
        path.write_bytes(as_bytes(text.replace("\n", " ")))
        _raises_only("config_invalid", ReplayProvider.from_file, path)


def test_a_recording_bounds_delay_ms(tmp_path: Path) -> None:
    path = tmp_path / "recording.jsonl"
    path.write_text('{"delay_ms": ' + "9" * 400 + "}\n", encoding="utf-8")
    with pytest.raises(RawError, match="delay_ms must be an integer from 0 to 60000"):
        ReplayProvider.from_file(path)


@FEW
@given(st.lists(filled(RECORDING_TEMPLATES), min_size=1, max_size=3))
def test_a_recording_raises_only_config_invalid(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "recording.jsonl"
        path.write_bytes(as_bytes("\n".join(line.replace("\n", " ") for line in lines)))
        _raises_only("config_invalid", ReplayProvider.from_file, path)

"""The config file, first version: every field validated with its JSON path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from raw_core import hookimpl
from raw_core.config import (
    CORE_SECTIONS,
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_STEPS,
    BackendConfig,
    ConfigSection,
    load_config,
    parse_config,
)
from raw_core.errors import ConfigInvalid, ConfigNotFound, PluginConflict, PluginInvalid
from raw_core.plugins import PluginHost
from raw_core.sessions.backend import SessionBackendRecord
from raw_core.sessions.sqlite.record import validate_config as validate_sqlite_options


def agent(**fields: Any) -> dict[str, Any]:
    return {"tools": {"use": []}, **fields}


def config(**top: Any) -> str:
    document = {"agents": {"coder": agent()}, **top}
    return json.dumps(document)


def test_minimal_config_has_defaults() -> None:
    parsed = parse_config(config())
    name, coder = parsed.resolve_agent()
    assert name == "coder"
    assert coder.model is None
    assert coder.max_steps == DEFAULT_MAX_STEPS
    assert coder.max_output_bytes == DEFAULT_MAX_OUTPUT_BYTES
    assert coder.handler_timeout_ms == 600_000
    assert coder.tools.rules == ()


def test_the_design_skeleton_shape_parses() -> None:
    parsed = parse_config(
        json.dumps(
            {
                "default_agent": "coder",
                "models": {
                    "local": {
                        "provider": "openai",
                        "model": "qwen3-coder",
                        "base_url": "http://127.0.0.1:8080/v1",
                    }
                },
                "agents": {
                    "coder": {
                        "model": "local",
                        "system": "Be careful.",
                        "max_steps": 10,
                        "max_output_bytes": 4096,
                        "tools": {
                            "use": ["builtin/read_file"],
                            "rules": [{"match": "builtin/*", "effect": "deny"}],
                        },
                    }
                },
            }
        )
    )
    _, coder = parsed.resolve_agent()
    assert coder.model == "local"
    assert parsed.models["local"].base_url == "http://127.0.0.1:8080/v1"
    assert coder.tools.rules[0].effect == "deny"


BAD = [
    pytest.param({"agents": []}, "$.agents", "expected an object", id="agents-array"),
    pytest.param(
        {"agents": {"a": agent()}, "extra": 1}, "$.extra", "unknown field", id="unknown-top-level"
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": []}, "color": "x"}}},
        "$.agents.a.color",
        "unknown field",
        id="unknown-agent-field",
    ),
    pytest.param({"agents": {"a": {}}}, "$.agents.a.tools", "required field", id="tools-missing"),
    pytest.param(
        {"agents": {"a": {"tools": {"use": "builtin/bash"}}}},
        "$.agents.a.tools.use",
        "expected an array",
        id="use-string",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [1]}}}},
        "$.agents.a.tools.use[0]",
        "expected a string",
        id="use-number",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "allow": []}}}},
        "$.agents.a.tools.allow",
        "unknown field",
        id="unknown-tools-field",
    ),
    pytest.param(
        {"agents": {"a": agent(max_steps=0)}},
        "$.agents.a.max_steps",
        "positive",
        id="max_steps-zero",
    ),
    pytest.param(
        {"agents": {"a": agent(max_steps="5")}},
        "$.agents.a.max_steps",
        "expected an integer",
        id="max_steps-string",
    ),
    pytest.param(
        {"agents": {"a": agent(max_output_bytes=-1)}},
        "$.agents.a.max_output_bytes",
        "positive",
        id="max_output_bytes-negative",
    ),
    pytest.param(
        {"agents": {"a": agent(handler_timeout_ms=0)}},
        "$.agents.a.handler_timeout_ms",
        "positive",
        id="handler_timeout_ms-zero",
    ),
    pytest.param(
        {"agents": {"a": agent(system=3)}},
        "$.agents.a.system",
        "expected a string",
        id="system-number",
    ),
    pytest.param(
        {"agents": {"a": agent(model="gpt")}},
        "$.agents.a.model",
        "not defined",
        id="model-undefined",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "models": {"m": {"provider": "openai"}}},
        "$.models.m.model",
        "required field",
        id="model-definition-incomplete",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "default_agent": "b"},
        "$.default_agent",
        "not an agent",
        id="default_agent-unknown",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "rules": [{"match": "x"}]}}}},
        "$.agents.a.tools.rules[0].effect",
        "required field",
        id="rule-effect-missing",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "rules": [{"match": "x", "effect": "block"}]}}}},
        "$.agents.a.tools.rules[0].effect",
        'expected one of "allow", "ask", "deny"',
        id="rule-effect-unknown",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "deny",
                                "when": {"source": "arguments", "any": "a", "regex": "b"},
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when",
        "only valid with effect 'ask'",
        id="when-with-deny",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "ask",
                                "when": {
                                    "source": "arguments",
                                    "any": "a",
                                    "regex": "b",
                                    "flags": "i",
                                },
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when.flags",
        "unknown field",
        id="when-unknown-key",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "ask",
                                "when": {"source": "output", "any": "a", "regex": "b"},
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when.source",
        "expected one of",
        id="when-source-unknown",
    ),
]


VAR = {"description": "d", "from": {"env": "E"}}
BAD += [
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"from": {"env": "E"}}}},
        "$.vars.K.description",
        "required field",
        id="var-description-missing",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"description": "d", "from": {}}}},
        "$.vars.K.from",
        'exactly one of "env", "file" and "command"',
        id="var-no-source",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"env": "E", "file": "f"}}},
        },
        "$.vars.K.from",
        "exactly one",
        id="var-two-sources",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"description": "d", "from": {"command": []}}}},
        "$.vars.K.from.command",
        "non-empty",
        id="var-empty-command",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"command": "ls -l"}}},
        },
        "$.vars.K.from.command",
        "expected an array",
        id="var-command-string",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"env": "E", "timeout_ms": 5}}},
        },
        "$.vars.K.from.timeout_ms",
        "command only",
        id="var-timeout-without-command",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {**VAR, "secret": True}}},
        "$.vars.K.secret",
        "unknown field",
        id="var-unknown-field",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"9K": VAR}},
        '$.vars["9K"]',
        "variable name",
        id="var-bad-name",
    ),
    pytest.param(
        {"agents": {"a": agent(vars={"use": ["NOPE"]})}},
        "$.agents.a.vars.use[0]",
        "not defined in vars",
        id="agent-var-undefined",
    ),
    pytest.param(
        {"agents": {"a": agent(vars={"use": ["K", "K"]})}, "vars": {"K": VAR}},
        "$.agents.a.vars.use[1]",
        "selected twice",
        id="agent-var-twice",
    ),
    pytest.param(
        {"agents": {"a": agent(skills={"use": ["x", "x"]})}},
        "$.agents.a.skills.use[1]",
        "selected twice",
        id="agent-skill-twice",
    ),
    pytest.param(
        {"agents": {"a": agent(skills=["x"])}},
        "$.agents.a.skills",
        "expected an object",
        id="agent-skills-array",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "skills": {"paths": "skills"}},
        "$.skills.paths",
        "expected an array",
        id="skills-paths-string",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "sessions": {"expire_after_days": -1}},
        "$.sessions.expire_after_days",
        "above 0",
        id="expiry-negative",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"command": ["x"], "timeout_ms": 10**30}}},
        },
        "$.vars.K.from.timeout_ms",
        "at most 600000",
        id="var-timeout-huge",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "sessions": {"expire_after_days": 1e10}},
        "$.sessions.expire_after_days",
        "at most 36500",
        id="expiry-huge",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "api_key": {"var": "MISSING"}}},
        },
        "$.models.m.api_key.var",
        "not defined in vars",
        id="model-key-var-undefined",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "api_key": "sk-123"}},
        },
        "$.models.m.api_key",
        "expected an object",
        id="model-key-literal",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "temperature": 9}},
        },
        "$.models.m.temperature",
        "from 0 to 2",
        id="model-temperature",
    ),
]


@pytest.mark.parametrize(("document", "path", "fragment"), BAD)
def test_each_bad_field_is_named_by_its_path(document: Any, path: str, fragment: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    assert caught.value.code == "config_invalid"
    assert caught.value.field == path
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"agents": {}, "agents": {}}', id="duplicate-key"),
        pytest.param('{"agents": NaN}', id="nan"),
        pytest.param("{", id="truncated"),
        pytest.param("[" * 100 + "]" * 100, id="too-deep"),
    ],
)
def test_text_that_is_not_strict_json_is_refused(text: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field == "$"


def test_agent_resolution() -> None:
    two = parse_config(json.dumps({"agents": {"a": agent(), "b": agent()}}))
    with pytest.raises(ConfigInvalid, match="--agent"):
        two.resolve_agent()
    assert two.resolve_agent("b")[0] == "b"
    with pytest.raises(ConfigInvalid, match="no agent named 'c'"):
        two.resolve_agent("c")
    defaulted = parse_config(
        json.dumps({"agents": {"a": agent(), "b": agent()}, "default_agent": "b"})
    )
    assert defaulted.resolve_agent()[0] == "b"
    assert defaulted.resolve_agent("a")[0] == "a"


def test_missing_file_is_config_not_found(tmp_path: Path) -> None:
    with pytest.raises(ConfigNotFound) as caught:
        load_config(tmp_path / "nope.json")
    assert caught.value.code == "config_not_found"


def test_loaded_config_knows_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text(config())
    assert load_config(path).directory == tmp_path


def test_every_shape_problem_is_reported_at_once() -> None:
    document = {
        "agents": {
            "a": {"tools": {"use": [3]}, "color": 1},
            "b": {"tools": {"use": []}, "max_steps": "5"},
        },
        "vars": {"K": {"description": 5, "from": {"env": "E"}}},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    paths = sorted(p["path"] for p in caught.value.context["problems"])
    assert paths == [
        "$.agents.a.color",
        "$.agents.a.tools.use[0]",
        "$.agents.b.max_steps",
        "$.vars.K.description",
    ]


def test_every_value_problem_is_reported_at_once() -> None:
    document = {
        "agents": {"a": {"tools": {"use": ["bad id"]}, "max_steps": 0, "max_output_bytes": -1}},
        "models": {"m": {"provider": "p", "model": "x", "temperature": 5, "max_tokens": 0}},
        "sessions": {"expire_after_days": 0},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    paths = sorted(p["path"] for p in caught.value.context["problems"])
    assert paths == [
        "$.agents.a.max_output_bytes",
        "$.agents.a.max_steps",
        "$.agents.a.tools.use[0]",
        "$.models.m.max_tokens",
        "$.models.m.temperature",
        "$.sessions.expire_after_days",
    ]


def test_references_are_all_reported_once_the_shape_is_right() -> None:
    document = {
        "default_agent": "z",
        "agents": {"a": agent(model="ghost"), "b": agent(vars={"use": ["V"]})},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    assert [p["path"] for p in caught.value.context["problems"]] == [
        "$.default_agent",
        "$.agents.a.model",
        "$.agents.b.vars.use[0]",
    ]


def test_the_full_skeleton_parses() -> None:
    parsed = parse_config(
        json.dumps(
            {
                "default_agent": "coder",
                "models": {
                    "local": {
                        "provider": "openai",
                        "model": "qwen3-coder",
                        "base_url": "http://127.0.0.1:8080/v1",
                        "api_key": {"var": "LOCAL_KEY"},
                    }
                },
                "vars": {
                    "LOCAL_KEY": {
                        "description": "key for the local server",
                        "from": {"env": "LOCAL_KEY"},
                    }
                },
                "skills": {"paths": ["skills"]},
                "sessions": {"expire_after_days": 30},
                "agents": {
                    "coder": {
                        "model": "local",
                        "system": "You are careful.",
                        "max_steps": 50,
                        "max_output_bytes": 8192,
                        "tools": {"use": ["builtin/read_file"], "rules": []},
                        "skills": {"use": []},
                        "vars": {"use": ["LOCAL_KEY"]},
                    }
                },
            }
        )
    )
    assert parsed.models["local"].api_key is not None
    assert parsed.models["local"].api_key.var == "LOCAL_KEY"
    assert parsed.vars["LOCAL_KEY"].source.env == "LOCAL_KEY"
    assert parsed.sessions.expire_after_days == 30
    assert parsed.skills.paths == ("skills",)


# --- plug-in sections and the session backend ---------------------------------------------


class Claims:
    """A plug-in that claims config sections and registers session backends."""

    def __init__(self, *sections: Any, backends: tuple[Any, ...] = ()) -> None:
        self.sections = sections
        self.backends = backends

    @hookimpl
    def raw_register_config_sections(self) -> list[Any]:
        return list(self.sections)

    @hookimpl
    def raw_register_session_backends(self) -> list[Any]:
        return list(self.backends)


def parse_notes(value: Any, field: str) -> str:
    if not isinstance(value, dict) or set(value) != {"folder"}:
        raise ConfigInvalid('expected {"folder": "..."}', field=field)
    if not isinstance(value["folder"], str):
        raise ConfigInvalid("expected a string", field=f"{field}.folder")
    return value["folder"]


NOTES = ConfigSection(name="notes", validate=parse_notes)


def problems_of(error: ConfigInvalid) -> list[tuple[str, str]]:
    return [(p["path"], p["message"]) for p in error.context["problems"]]


def test_an_unclaimed_top_level_key_is_unknown() -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(mcp={"servers": {}}))
    assert caught.value.field == "$.mcp"
    assert "no installed plug-in claims it" in caught.value.message


def test_an_unknown_key_lists_the_claimed_ones(host: PluginHost) -> None:
    host.register(Claims(NOTES), name="acme")
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(mcp={}), host=host)
    assert caught.value.field == "$.mcp"
    assert "plug-ins claim: notes" in caught.value.message


def test_a_claimed_section_is_validated_and_kept(host: PluginHost, tmp_path: Path) -> None:
    host.register(Claims(NOTES), name="acme")
    parsed = parse_config(config(notes={"folder": "n"}), host=host)
    assert parsed.sections == {"notes": "n"}
    with pytest.raises(TypeError):
        parsed.sections["notes"] = "other"  # type: ignore[index]
    assert parse_config(config(), host=host).sections == {}
    path = tmp_path / "raw.json"
    path.write_text(config(notes={"folder": "m"}))
    assert load_config(path, host=host).sections["notes"] == "m"


def test_without_the_host_a_plugin_section_is_unknown(host: PluginHost) -> None:
    host.register(Claims(NOTES), name="acme")
    with pytest.raises(ConfigInvalid, match="unknown field"):
        parse_config(config(notes={"folder": "n"}))


def test_a_section_problem_names_its_field_beside_core_problems(host: PluginHost) -> None:
    host.register(Claims(NOTES), name="acme")
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(notes={"folder": 3}, default_agent="nobody"), host=host)
    assert ("$.notes.folder", "expected a string") in problems_of(caught.value)
    assert "$.default_agent" in [path for path, _ in problems_of(caught.value)]


def test_a_section_problem_outside_its_section_is_placed_at_the_section(
    host: PluginHost,
) -> None:
    def strays(value: Any, field: str) -> Any:
        raise ConfigInvalid("bad", field="$.agents")

    host.register(Claims(ConfigSection(name="notes", validate=strays)), name="acme")
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(notes=1), host=host)
    assert caught.value.field == "$.notes"


def test_a_validator_that_crashes_is_config_invalid_naming_the_plugin(host: PluginHost) -> None:
    def crashes(value: Any, field: str) -> Any:
        raise KeyError("folder")

    host.register(Claims(ConfigSection(name="notes", validate=crashes)), name="acme")
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(notes={}), host=host)
    assert caught.value.field == "$.notes"
    assert "plug-in 'acme'" in caught.value.message
    assert "KeyError" in caught.value.message


@pytest.mark.parametrize("key", sorted(CORE_SECTIONS))
def test_a_core_key_cannot_be_claimed(host: PluginHost, key: str) -> None:
    host.register(Claims(ConfigSection(name=key, validate=parse_notes)), name="acme")
    with pytest.raises(PluginConflict, match="raw's own config"):
        host.config_sections()


def test_two_plugins_claiming_one_key_conflict_naming_both(host: PluginHost) -> None:
    host.register(Claims(NOTES), name="one")
    host.register(Claims(NOTES), name="two")
    with pytest.raises(PluginConflict, match="'one' and 'two'"):
        parse_config(config(), host=host)


def test_section_records_are_typed(host: PluginHost) -> None:
    host.register(Claims("notes"), name="acme")
    with pytest.raises(PluginInvalid, match="ConfigSection"):
        host.config_sections()


def test_the_backend_defaults_to_sqlite() -> None:
    backend = parse_config(config()).sessions.backend
    assert backend == BackendConfig(type="sqlite", options={})
    backend = parse_config(config(sessions={"backend": {"directory": "/srv/raw"}})).sessions.backend
    assert backend.type == "sqlite"
    assert backend.options == {"directory": "/srv/raw"}
    home = parse_config(config(sessions={"backend": {"directory": "~/raw"}})).sessions.backend
    assert home.options == {"directory": "~/raw"}


@pytest.mark.parametrize(
    ("backend", "path"),
    [
        ({"colour": "blue"}, "$.sessions.backend.colour"),
        ({"directory": 3}, "$.sessions.backend.directory"),
        ({"directory": ""}, "$.sessions.backend.directory"),
        ({"directory": "sessions"}, "$.sessions.backend.directory"),
        ({"type": 3}, "$.sessions.backend.type"),
        ("sqlite", "$.sessions.backend"),
    ],
)
def test_sqlite_backend_options_are_checked(backend: Any, path: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(sessions={"backend": backend}))
    assert caught.value.field == path


@pytest.mark.parametrize(
    "options",
    [{"colour": "blue"}, {"directory": 3}, {"directory": ""}, {"directory": "rel/dir"}],
)
def test_loading_refuses_what_opening_the_sqlite_backend_refuses(options: Any) -> None:
    """The config's check and the backend's own say the same, at the same field."""
    with pytest.raises(ConfigInvalid) as at_open:
        validate_sqlite_options(options, "$.sessions.backend")
    with pytest.raises(ConfigInvalid) as at_load:
        parse_config(config(sessions={"backend": options}))
    assert (at_load.value.field, at_load.value.message) == (
        at_open.value.field,
        at_open.value.message,
    )


async def _open(**options: Any) -> Any:
    raise AssertionError("not opened in these tests")


def check_postgres(options: Any, field: str) -> None:
    if "dsn" not in options:
        raise ConfigInvalid("expected a dsn", field=f"{field}.dsn")


POSTGRES = SessionBackendRecord(name="postgres", factory=_open, validate_config=check_postgres)


def test_without_a_host_any_backend_type_is_accepted_unchecked() -> None:
    backend = parse_config(config(sessions={"backend": {"type": "postgres", "x": 1}}))
    assert backend.sessions.backend == BackendConfig(type="postgres", options={"x": 1})


def test_with_a_host_the_backend_must_be_registered(host: PluginHost) -> None:
    host.register(Claims(backends=(POSTGRES,)), name="pg")
    assert list(host.session_backends()) == ["postgres"]
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(sessions={"backend": {"type": "mongo"}}), host=host)
    assert caught.value.field == "$.sessions.backend.type"
    assert "available: sqlite, postgres" in caught.value.message


def test_a_plugin_backend_checks_its_options(host: PluginHost) -> None:
    host.register(Claims(backends=(POSTGRES,)), name="pg")
    ok = parse_config(config(sessions={"backend": {"type": "postgres", "dsn": "x"}}), host=host)
    assert ok.sessions.backend.options == {"dsn": "x"}
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(config(sessions={"backend": {"type": "postgres"}}), host=host)
    assert caught.value.field == "$.sessions.backend.dsn"


def test_a_backend_validator_that_crashes_names_the_plugin(host: PluginHost) -> None:
    def crashes(options: Any, field: str) -> None:
        raise RuntimeError("boom")

    record = SessionBackendRecord(name="postgres", factory=_open, validate_config=crashes)
    host.register(Claims(backends=(record,)), name="pg")
    with pytest.raises(ConfigInvalid, match="plug-in 'pg'") as caught:
        parse_config(config(sessions={"backend": {"type": "postgres"}}), host=host)
    assert caught.value.field == "$.sessions.backend"


def test_sqlite_is_raws_own_backend_name(host: PluginHost) -> None:
    host.register(Claims(backends=(attrs.evolve(POSTGRES, name="sqlite"),)), name="pg")
    with pytest.raises(PluginConflict, match="raw's own"):
        host.session_backends()


def test_two_backends_of_one_name_conflict_naming_both(host: PluginHost) -> None:
    host.register(Claims(backends=(POSTGRES,)), name="one")
    host.register(Claims(backends=(POSTGRES,)), name="two")
    with pytest.raises(PluginConflict, match="'one' and 'two'"):
        host.session_backends()


def test_backend_records_are_typed(host: PluginHost) -> None:
    host.register(Claims(backends=("postgres",)), name="pg")
    with pytest.raises(PluginInvalid, match="SessionBackendRecord"):
        host.session_backends()


@pytest.mark.parametrize(
    ("data", "path", "says"),
    [
        pytest.param(
            {"agents": {"a": {"tools": {"use": []}, "hooks": {"use": ["builtin/guard"]}}}},
            "$.agents.a.hooks.use[0]",
            'found "builtin/guard"',
            id="hook-identity",
        ),
        pytest.param(
            {
                "agents": {"a": {"tools": {"use": []}}},
                "sessions": {"backend": {"directory": ["a"]}},
            },
            "$.sessions.backend.directory",
            "found an array",
            id="frozen-array",
        ),
        pytest.param(
            {"agents": {"a": {"tools": {"use": []}}}, "sessions": {"backend": {"directory": {}}}},
            "$.sessions.backend.directory",
            "found an object",
            id="frozen-object",
        ),
    ],
)
def test_config_messages_quote_values_as_json(data: Any, path: str, says: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(data))
    assert caught.value.field == path
    assert says in caught.value.message
    for python in ("['", "('", "'builtin", "tuple", "dict", "FrozenDict", "<class"):
        assert python not in caught.value.message

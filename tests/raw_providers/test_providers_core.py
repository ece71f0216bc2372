"""The plug-in, the core helper that makes providers, the error seam, and lazy imports."""

from __future__ import annotations

import subprocess
import sys
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from raw_core.config import ModelConfig, SecretRef, VarDefinition, VarSource
from raw_core.errors import (
    AuthFailed,
    ConfigInvalid,
    ContextTooLong,
    PluginInvalid,
    ProviderFailed,
    ProviderUnavailable,
    RateLimited,
)
from raw_core.plugins import PluginHost
from raw_core.providers.contract import ProviderRecord
from raw_core.runtime.models import credential_status, make_provider, resolve_credential
from raw_providers import plugin
from raw_providers._errors import error_from_body, redact, retry_after_seconds

KEY = "sk-test-SECRET-abcdef012345"


@pytest.fixture
def providers_host(host: PluginHost) -> PluginHost:
    host.register(plugin, name="providers")
    return host


def test_the_plugin_registers_three_providers() -> None:
    names = [record.name for record in plugin.raw_register_providers()]
    assert names == ["openai", "openai-compatible", "anthropic"]


def test_the_entry_point_loads_as_the_providers_plugin() -> None:
    host = PluginHost()
    host.load_entry_points()
    assert "providers" in host.plugin_names()
    assert {"openai", "anthropic", "openai-compatible"} <= set(host.providers())


@pytest.mark.parametrize(
    ("provider", "fields", "kind"),
    [
        ("openai", {"api_key": SecretRef(env="TEST_OPENAI_KEY")}, "OpenAIProvider"),
        (
            "openai",
            {"api_key": SecretRef(env="TEST_OPENAI_KEY"), "api": "responses"},
            "OpenAIProvider",
        ),
        ("openai-compatible", {"base_url": "http://127.0.0.1:1/v1"}, "OpenAIProvider"),
        ("anthropic", {"api_key": SecretRef(env="TEST_OPENAI_KEY")}, "AnthropicProvider"),
    ],
)
def test_make_provider_resolves_the_credential_from_the_environment(
    providers_host: PluginHost, provider: str, fields: dict[str, Any], kind: str
) -> None:
    model = ModelConfig(provider=provider, model="m", **fields)
    made = make_provider(providers_host, model, name="main", environ={"TEST_OPENAI_KEY": KEY})
    assert type(made).__name__ == kind
    assert made.name == provider
    assert KEY not in repr(made)


def test_make_provider_resolves_a_variable_through_the_callback(providers_host: PluginHost) -> None:
    model = ModelConfig(provider="openai", model="m", api_key=SecretRef(var="OPENAI"))
    asked: list[str] = []

    def resolve(name: str) -> str:
        asked.append(name)
        return KEY

    made = make_provider(providers_host, model, name="main", resolve_var=resolve, environ={})
    assert asked == ["OPENAI"]
    assert made.name == "openai"


@pytest.mark.parametrize(
    ("model", "environ", "field", "words"),
    [
        (
            ModelConfig(provider="gemini", model="m"),
            {},
            "$.models.main.provider",
            "no provider named 'gemini'",
        ),
        (
            ModelConfig(provider="openai", model="m", api_key=SecretRef(env="NOPE")),
            {},
            "$.models.main.api_key",
            "NOPE, which is not set",
        ),
        (
            ModelConfig(provider="openai", model="m", api_key=SecretRef(env="EMPTY")),
            {"EMPTY": ""},
            "$.models.main.api_key",
            "not set",
        ),
        (
            ModelConfig(provider="openai", model="m", api_key=SecretRef(var="V")),
            {},
            "$.models.main.api_key",
            "no variable resolver",
        ),
        (ModelConfig(provider="openai", model="m"), {}, "$.models.main", "needs a credential"),
        (ModelConfig(provider="anthropic", model="m"), {}, "$.models.main", "needs a credential"),
        (
            ModelConfig(provider="openai-compatible", model="m"),
            {},
            "$.models.main",
            "needs a base_url",
        ),
    ],
    ids=[
        "unknown-provider",
        "env-unset",
        "env-empty",
        "var-no-resolver",
        "openai-no-key",
        "anthropic-no-key",
        "compatible-no-url",
    ],
)
def test_make_provider_config_errors(
    providers_host: PluginHost,
    model: ModelConfig,
    environ: dict[str, str],
    field: str,
    words: str,
) -> None:
    with pytest.raises(ConfigInvalid, match=words) as caught:
        make_provider(providers_host, model, name="main", environ=environ)
    assert caught.value.field == field


def test_a_factory_that_crashes_is_a_plugin_error_without_its_message(host: PluginHost) -> None:
    def factory(model: ModelConfig, api_key: str | None = None) -> Any:
        raise RuntimeError(f"boom {api_key}")

    class Broken:
        from raw_core.plugins.hookspecs import hookimpl

        @staticmethod
        @hookimpl
        def raw_register_providers() -> list[ProviderRecord]:
            return [ProviderRecord(name="broken", factory=factory)]

    host.register(Broken, name="broken")
    model = ModelConfig(provider="broken", model="m", api_key=SecretRef(env="K"))
    with pytest.raises(PluginInvalid) as caught:
        make_provider(host, model, environ={"K": KEY})
    assert KEY not in str(caught.value)


def test_resolve_credential_without_a_reference_is_none() -> None:
    assert resolve_credential(ModelConfig(provider="openai", model="m")) is None


def test_credential_status_never_reads_a_value(tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text("secret")
    definitions = {
        "FROM_ENV": VarDefinition(description="", source=VarSource(env="SET_ONE")),
        "FROM_FILE": VarDefinition(description="", source=VarSource(file="key.txt")),
        "FROM_CMD": VarDefinition(description="", source=VarSource(command=("false",))),
    }

    def status(ref: SecretRef | None) -> tuple[str, str | None]:
        model = ModelConfig(provider="openai", model="m", api_key=ref)
        found = credential_status(
            model, environ={"SET_ONE": "x"}, vars=definitions, base_dir=tmp_path
        )
        return found.state, found.source

    assert status(None) == ("none", None)
    assert status(SecretRef(env="SET_ONE")) == ("set", "env:SET_ONE")
    assert status(SecretRef(env="OTHER")) == ("missing", "env:OTHER")
    assert status(SecretRef(var="FROM_ENV")) == ("set", "var:FROM_ENV (env:SET_ONE)")
    assert status(SecretRef(var="FROM_FILE")) == ("set", "var:FROM_FILE (file:key.txt)")
    assert status(SecretRef(var="FROM_CMD")) == ("unchecked", "var:FROM_CMD (command)")
    assert status(SecretRef(var="UNDEFINED")) == ("missing", "var:UNDEFINED")


# --- the error seam ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    later = retry_after_seconds({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert later is not None
    assert 25 <= later <= 31


def test_redact_removes_the_key_and_anything_shaped_like_one() -> None:
    text = f"bad key {KEY}; also sk-proj-****abcd1234 and key_live_0123456789"
    cleaned = redact(text, [KEY])
    assert KEY not in cleaned
    assert "abcd1234" not in cleaned
    assert "0123456789" not in cleaned


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"error": {"type": "authentication_error", "message": "x"}}, None, AuthFailed),
        ({"error": {"code": "insufficient_quota", "message": "x"}}, 429, RateLimited),
        ({"error": {"message": "Input is too long for requested model."}}, 400, ContextTooLong),
        ({"error": {"message": "too big"}}, 413, ContextTooLong),
        ({"error": {"message": "gateway"}}, 502, ProviderUnavailable),
        ({"error": {"message": "request timeout"}}, 408, ProviderUnavailable),
        ("<html>teapot</html>", 418, ProviderFailed),
    ],
)
def test_error_bodies(body: Any, status: int | None, error: type[Exception]) -> None:
    assert isinstance(error_from_body(body, provider="p", status=status), error)


def test_importing_the_plugin_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "import raw_providers, raw_providers.plugin\n"
        "from raw_core.plugins import PluginHost\n"
        "host = PluginHost(); host.load_entry_points(); host.providers()\n"
        "print(','.join(m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_raw_help_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from raw_core.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='raw')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(','.join(m for m in ('openai', 'anthropic') if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip() == ""


@pytest.mark.parametrize(
    ("key", "message"),
    [
        pytest.param(
            "gsk_SECRETVALUE123\r",
            "Illegal header value b'Bearer gsk_SECRETVALUE123\\r'",
            id="bytes-repr-with-cr",
        ),
        pytest.param(
            "SECRETVALUE123\t\r",
            "Illegal header value b'Bearer SECRETVALUE123\\t\\r'",
            id="tab-and-cr",
        ),
        pytest.param(" padded-secret-42 ", "bad key padded-secret-42 sent", id="stripped"),
    ],
)
def test_a_key_is_redacted_however_an_error_quotes_it(key: str, message: str) -> None:
    from raw_providers._errors import redact

    cleaned = redact(message, [key])
    assert "SECRETVALUE123" not in cleaned
    assert "padded-secret-42" not in cleaned
    assert "[redacted]" in cleaned

"""builtin/view_image with real PNG and JPEG files made by the test: the image reaches the
model as an image block; a file is judged by its content, never its name; the size limits
hold; and the config refuses the tool for a model without vision."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from raw_builtin_tools.toolkit import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE
from raw_core import App, Reply, ScriptedProvider, load_config
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost
from raw_core.sessions.blocks import ImageBlock, TextBlock
from raw_core.sessions.sqlite import ToolResultMessage
from tests.images import jpeg, png


def host() -> PluginHost:
    loaded = PluginHost()
    loaded.load_entry_points()
    return loaded


def config(root: Path, **models: Any) -> Path:
    path = root / "raw.json"
    agent: dict[str, Any] = {"tools": {"use": ["builtin/view_image"]}}
    if models:
        agent["model"] = next(iter(models))
    path.write_text(json.dumps({"models": models, "agents": {"a": agent}}))
    return path


async def view(root: Path, path: str) -> Any:
    async with App.open(config(root), host=host(), store_dir=root / "s") as app:
        return await app.call_tool("builtin/view_image", {"path": path}, cwd=root)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(
    ("name", "data", "media_type", "line"),
    [
        ("shot.png", png(64, 48), "image/png", "shot.png: PNG image, 64×48 pixels"),
        ("photo.jpg", jpeg(40, 24), "image/jpeg", "photo.jpg: JPEG image, 40×24 pixels"),
        ("named-png.png", jpeg(16, 16), "image/jpeg", "named-png.png: JPEG image, 16×16"),
        ("no-extension", png(1, 1), "image/png", "no-extension: PNG image, 1×1"),
    ],
)
async def test_an_image_is_judged_by_its_content_and_sent_whole(
    tmp_path: Path, anyio_backend: str, name: str, data: bytes, media_type: str, line: str
) -> None:
    (tmp_path / name).write_bytes(data)
    result = await view(tmp_path, name)
    assert result.status == "ok"
    text, image = result.content
    assert isinstance(text, TextBlock)
    assert text.text == f"{line}{text.text.removeprefix(line)}"
    assert text.text.endswith(f", {len(data)} bytes")
    assert isinstance(image, ImageBlock)
    assert image.media_type == media_type
    assert base64.b64decode(image.data) == data


def _truncated() -> bytes:
    return png(8, 8)[:-10]


def _bad_crc() -> bytes:
    data = bytearray(png(8, 8))
    data[20] ^= 0xFF  # inside IHDR's width
    return bytes(data)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(
    ("name", "data", "code", "says"),
    [
        ("notes.png", b"just some text, not a picture\n", "image_invalid", "not a PNG or JPEG"),
        ("empty.jpg", b"", "image_invalid", "not a PNG or JPEG"),
        ("cut.png", _truncated(), "image_invalid", "begins as a PNG but"),
        ("crc.png", _bad_crc(), "image_invalid", "the checksum of its IHDR chunk is wrong"),
        ("cut.jpg", jpeg(8, 8)[:30], "image_invalid", "begins as a JPEG but"),
        ("wide.png", png(MAX_IMAGE_SIDE + 1, 1), "image_too_large", "pixels a side"),
        ("big.png", png(2, 2, extra=MAX_IMAGE_BYTES), "image_too_large", "bytes; at most"),
    ],
)
async def test_a_file_that_is_not_a_fitting_image_is_a_tool_error_with_its_code(
    tmp_path: Path, anyio_backend: str, name: str, data: bytes, code: str, says: str
) -> None:
    (tmp_path / name).write_bytes(data)
    result = await view(tmp_path, name)
    assert result.status == "error"
    assert result.code == "tool_error"
    (text,) = result.content
    assert text.text.startswith(f"{code}: ")
    assert says in text.text


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_what_is_not_a_readable_file(tmp_path: Path, anyio_backend: str) -> None:
    os.mkfifo(tmp_path / "pipe.png")  # opening it must not wait for a writer
    (tmp_path / "folder.png").mkdir()
    expected = {
        "missing.png": "file_not_found",
        "folder.png/x.png": "file_not_found",
        "folder.png": "not_a_file",
        "pipe.png": "not_a_file",
    }
    for path, code in expected.items():
        result = await view(tmp_path, path)
        assert result.content[0].text.startswith(f"{code}: "), path
    invalid = await view(tmp_path, "dir/")
    assert invalid.code == "invalid_arguments"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_model_receives_the_image_block_under_the_cap(
    tmp_path: Path, anyio_backend: str
) -> None:
    data = png(300, 200, extra=100_000)  # far more bytes than the cap; an image counts 1 KiB
    (tmp_path / "big.png").write_bytes(data)
    path = tmp_path / "raw.json"
    agent = {"tools": {"use": ["builtin/view_image"]}, "max_output_bytes": 2048}
    path.write_text(json.dumps({"agents": {"a": agent}}))
    model = ScriptedProvider(
        [Reply(tool_calls=(("view_image", {"path": "big.png"}),)), Reply(text="a red box")]
    )
    app_block = App.open(path, host=host(), store_dir=tmp_path / "s", provider=model)
    async with app_block as app, app.open_session(cwd=tmp_path) as session:
        await session.run_turn("what is in big.png?")
    (result,) = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert result.status == "ok"
    image = result.content[-1]
    assert isinstance(image, ImageBlock)
    assert base64.b64decode(image.data) == data


def test_selecting_it_for_a_model_without_vision_is_config_invalid(tmp_path: Path) -> None:
    blind = {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigInvalid) as raised:
        load_config(config(tmp_path, local=blind))
    message = str(raised.value)
    assert "builtin/view_image returns images" in message
    assert "models.local.vision to true" in message
    assert raised.value.field == "$.agents.a.tools.use[0]"
    seeing = load_config(config(tmp_path, local={**blind, "vision": True}))
    assert list(seeing.agents["a"].tools.use) == ["builtin/view_image"]

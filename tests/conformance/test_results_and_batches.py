"""Spec 001, "Batch-capable tools": indexed results with a status per entry and one shared
result cap on what the model receives, while the full output stays for the terminal."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core.errors import HandlerError
from raw_core.sessions.blocks import ImageBlock, JsonBlock, TextBlock, block_to_dict
from raw_core.tools.results import (
    IMAGE_BLOCK_BYTES,
    BatchEntry,
    BatchResult,
    cap_blocks,
    model_bytes,
    normalize_content,
)


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def test_a_result_under_the_cap_is_unchanged() -> None:
    blocks = (TextBlock(text="hello"),)
    assert cap_blocks(blocks, 8192) == (blocks, False)


def test_a_result_over_the_cap_is_cut_with_a_visible_marker_inside_the_cap() -> None:
    blocks = (TextBlock(text="x" * 10000),)
    capped, truncated = cap_blocks(blocks, 8192)
    assert truncated
    assert 8150 <= model_bytes(capped) <= 8192
    assert isinstance(capped[0], TextBlock)
    assert isinstance(capped[-1], TextBlock)
    shown = len(capped[0].text)
    assert capped[0].text == "x" * shown
    assert f"output truncated: the model sees {shown} of 10000 bytes" in capped[-1].text


def test_json_counts_as_serialized_and_an_image_as_a_fixed_size() -> None:
    image = ImageBlock(media_type="image/png", data="A" * 50000)
    blocks = (JsonBlock(json_text='{"k": "vvvvvvvvvv"}'), image)
    fits = IMAGE_BLOCK_BYTES + 19
    assert model_bytes(blocks) == fits
    assert cap_blocks(blocks, fits) == (blocks, False)
    capped, truncated = cap_blocks(blocks, fits - 1)  # the image no longer fits: left out
    assert truncated
    assert not any(isinstance(block, ImageBlock) for block in capped)
    assert model_bytes(capped) <= fits - 1
    capped, truncated = cap_blocks((JsonBlock(json_text='["' + "y" * 100 + '"]'),), 40)
    assert truncated
    assert isinstance(capped[0], TextBlock)
    assert capped[0].text.startswith('["yyy')
    assert model_bytes(capped) <= 40


def test_the_cut_never_splits_a_utf8_character() -> None:
    capped, _ = cap_blocks((TextBlock(text="é" * 100),), 64)
    assert isinstance(capped[0], TextBlock)
    assert set(capped[0].text) == {"é"}
    assert model_bytes(capped) <= 64


@given(
    st.lists(st.text(max_size=400), max_size=4),
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=1, max_value=3000),
)
def test_the_model_never_receives_more_than_the_cap(
    texts: list[str], images: int, max_bytes: int
) -> None:
    blocks = tuple(TextBlock(text=text) for text in texts) + tuple(
        ImageBlock(media_type="image/png", data="AAAA") for _ in range(images)
    )
    capped, truncated = cap_blocks(blocks, max_bytes)
    total = model_bytes(blocks)
    assert truncated == (total > max_bytes)
    assert model_bytes(capped) <= max_bytes
    if not truncated:
        assert capped == blocks
    elif max_bytes >= 64:  # room for a marker that says how much the model sees
        marker = capped[-1]
        assert isinstance(marker, TextBlock)
        assert "truncated" in marker.text
        shown = model_bytes(capped[:-1])
        assert f"{shown} of {total} bytes" in marker.text


@pytest.mark.parametrize("size", [1, 10_000], ids=["small", "large"])
def test_a_lone_surrogate_in_any_block_is_read_as_a_replacement_character(size: int) -> None:
    name = "report\udcff.txt"  # os.fsdecode of a file name that is not UTF-8
    blocks, _ = normalize_content(
        {
            "content": [
                {"type": "text", "text": name * size},
                {"type": "json", "json": {"files": [name] * size, name: 1}},
            ]
        }
    )
    assert blocks[0] == TextBlock(text="report\ufffd.txt" * size)
    assert block_to_dict(blocks[1])["json"] == {
        "files": ["report\ufffd.txt"] * size,
        "report\ufffd.txt": 1,
    }
    capped, _ = cap_blocks(blocks, 100)
    for block in capped:  # what the model is sent can be encoded
        json.dumps(block_to_dict(block), ensure_ascii=False).encode("utf-8")


def test_json_keys_that_read_alike_once_cleaned_are_refused_not_dropped() -> None:
    clean = normalize_content(
        {"content": [{"type": "json", "json": {"a\udc80": [{"b\udcff": 1}]}}]}
    )
    assert block_to_dict(clean[0][0])["json"] == {"a\ufffd": [{"b\ufffd": 1}]}
    alike = {name: index for index, name in enumerate(["a\udc80", "a\udcff"])}
    with pytest.raises(HandlerError, match=r"json: the keys 'a\\udc80' and 'a\\udcff' both read"):
        normalize_content({"content": [{"type": "json", "json": alike}]})


def test_a_batch_row_made_directly_is_cleaned_too() -> None:
    batch = BatchResult(entries=[BatchEntry(label="caf\udce9.txt", status="ok", body="x\udcff")])
    text, full, _ = batch.render(1000)
    assert text == full == "[1/1] ok: caf\ufffd.txt\nx\ufffd\n"
    text.encode("utf-8")


def test_batch_rows_are_indexed_with_a_status_each() -> None:
    batch = BatchResult()
    batch.ok("a.txt", "alpha")
    batch.error("b.txt", "file_not_found", "no such file")
    batch.skipped("c.txt", "an earlier command timed out")
    text, full, truncated = batch.render(8192)
    assert not truncated
    assert (
        text
        == full
        == (
            "[1/3] ok: a.txt\nalpha\n"
            "[2/3] error (file_not_found): b.txt\nno such file\n"
            "[3/3] skipped: c.txt\nan earlier command timed out\n"
        )
    )


def test_one_large_row_cannot_hide_the_others() -> None:
    batch = BatchResult()
    batch.ok("big", "B" * 100000)
    for index in range(15):
        batch.ok(f"small{index}", f"s{index}")
    text, full, truncated = batch.render(8192)
    assert truncated
    assert utf8(text) <= 8192  # the per-row marker included
    for index in range(15):
        assert f"[{index + 2}/16] ok: small{index}\ns{index}\n" in text
    assert "more bytes of this row cut" in text
    assert full.count("B") == 100000


@given(
    st.lists(st.tuples(st.text(max_size=400), st.text(max_size=3000)), min_size=1, max_size=16),
    st.integers(min_value=1, max_value=9000),
)
def test_the_cap_holds_headers_and_markers_included_and_nothing_is_lost(
    rows: list[tuple[str, str]], cap: int
) -> None:
    batch = BatchResult()
    for label, body in rows:
        batch.ok(label.replace("\n", " "), body)
    text, full, truncated = batch.render(cap)
    for index, (label, _body) in enumerate(rows):
        assert f"[{index + 1}/{len(rows)}] ok: {label.replace(chr(10), ' ')}\n" in full
    if not truncated:
        assert text == full
        return
    shown_rows = [i for i in range(len(rows)) if f"[{i + 1}/{len(rows)}] ok: " in text]
    hidden = re.search(r"\[\.\.\. (\d+) more rows not shown", text)
    if hidden:
        # Headers alone overran the cap: a prefix of the rows, then one count of the rest.
        assert shown_rows == list(range(len(shown_rows)))
        assert int(hidden.group(1)) == len(rows) - len(shown_rows)
    elif cap >= 100:  # below that, even the marker may be cut to the cap
        assert shown_rows == list(range(len(rows)))
    assert utf8(text) <= cap


def test_many_long_labels_cannot_flood_the_context() -> None:
    batch = BatchResult()
    for index in range(16):
        batch.ok(f"src/{'deep/' * 600}file{index}.txt", "x")
    text, full, truncated = batch.render(8192)
    assert truncated
    assert utf8(text) <= 8192
    assert text.count("…") == 16
    assert "[16/16] ok: src/deep/" in text
    assert "file15.txt" in full
    assert "file15.txt" not in text


def test_headers_beyond_the_cap_are_counted_not_shown() -> None:
    batch = BatchResult()
    for index in range(50):
        batch.ok(f"{'n' * 150}{index}", "")
    text, _full, truncated = batch.render(1000)
    assert truncated
    assert utf8(text) <= 1000
    shown = text.count(" ok: ")
    assert 0 < shown < 50
    assert f"[... {50 - shown} more rows not shown: the output cap is 1000 bytes]" in text


@pytest.mark.parametrize(
    "returned",
    [
        pytest.param("text", id="string"),
        pytest.param({"content": "text"}, id="content-string"),
        pytest.param({"content": [{"type": "text"}]}, id="text-without-text"),
        pytest.param({"content": [{"type": "panel", "panel": "p"}]}, id="unknown-type"),
        pytest.param({"content": [{"type": "json", "json": float("nan")}]}, id="json-nan"),
        pytest.param(
            {"content": [{"type": "image", "media_type": "image/bmp", "data": ""}]}, id="image-mime"
        ),
        pytest.param({"content": [], "extra": 1}, id="extra-field"),
        pytest.param({"content": [], "is_error": "yes"}, id="is_error-string"),
    ],
)
def test_results_that_are_not_in_the_spec_shape_are_handler_errors(returned: Any) -> None:
    with pytest.raises(HandlerError):
        normalize_content(returned)


def test_the_three_block_kinds_are_accepted() -> None:
    blocks, is_error = normalize_content(
        {
            "content": [
                {"type": "text", "text": "t"},
                {"type": "json", "json": {"a": [1]}},
                {"type": "image", "media_type": "image/jpeg", "data": "AAAA"},
            ],
            "is_error": False,
        }
    )
    assert blocks == (
        TextBlock(text="t"),
        JsonBlock(json_text='{"a": [1]}'),
        ImageBlock(media_type="image/jpeg", data="AAAA"),
    )
    assert not is_error
    assert [block_to_dict(b) for b in blocks][1] == {"type": "json", "json": {"a": [1]}}

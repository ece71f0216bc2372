"""A local PNG or JPEG, checked by its content: :func:`read_image`.

The format is what the bytes say, never the file's name: a PNG is its signature then a
well-formed chunk sequence (each chunk's length inside the file and its CRC right) from
``IHDR`` to ``IEND``; a JPEG is ``FF D8`` then well-formed marker segments up to the start of
scan, with a frame header (``SOFn``) before it. Nothing is decoded, so the check costs one
pass over the bytes. The width and height come from ``IHDR`` and the frame header.

Limits (:data:`MAX_IMAGE_BYTES`, :data:`MAX_IMAGE_SIDE`) keep an image within what the
model services accept: the file is measured before it is read, and never read past the
limit.
"""

from __future__ import annotations

import base64
import errno
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_SIDE", "ImageFile", "ImageProblem", "read_image"]

MAX_IMAGE_BYTES: Final = 3_750_000
"""Bytes an image file may hold: 5,000,000 once base64-encoded, the most Anthropic takes."""
MAX_IMAGE_SIDE: Final = 8000
"""Pixels an image may be wide or high."""

_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
# Markers that stand alone (no length follows): TEM, RST0-7.
_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD8)})
# Start-of-frame markers: C0-CF except DHT (C4), JPG (C8) and DAC (CC).
_FRAMES: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


class ImageProblem(Exception):
    """Why a file cannot be shown, with a stable ``code``: ``file_not_found``,
    ``not_a_file``, ``permission_denied``, ``read_failed``, ``image_too_large`` or
    ``image_invalid``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class ImageFile:
    """A checked image: ``media_type`` (``image/png`` or ``image/jpeg``), its size in
    pixels and its bytes."""

    media_type: str
    width: int
    height: int
    data: bytes

    @property
    def kind(self) -> str:
        """``PNG`` or ``JPEG``."""
        return "PNG" if self.media_type == "image/png" else "JPEG"

    def base64(self) -> str:
        """The bytes as base64 text, as an image block carries them."""
        return base64.b64encode(self.data).decode("ascii")


def _chunk(kind: bytes) -> str:
    """A PNG chunk's type as a message names it: ``IEND``, or its bytes' escapes when they
    are not letters (a damaged file)."""
    return kind.decode("ascii") if kind.isalpha() else kind.hex(" ")


def _png_size(data: bytes) -> tuple[int, int]:
    position = len(_PNG_SIGNATURE)
    size: tuple[int, int] | None = None
    while True:
        if position + 12 > len(data):
            raise ValueError("it ends before its IEND chunk (a cut or damaged PNG)")
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        end = position + 12 + length
        if end > len(data):
            raise ValueError(f"its {_chunk(kind)} chunk runs past the end of the file")
        body = data[position + 8 : end - 4]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"the checksum of its {_chunk(kind)} chunk is wrong")
        if size is None:
            if kind != b"IHDR" or length != 13:
                raise ValueError("it does not begin with an IHDR chunk")
            size = struct.unpack(">II", body[:8])
        if kind == b"IEND":
            return size
        position = end


def _jpeg_size(data: bytes) -> tuple[int, int]:
    position = 2
    size: tuple[int, int] | None = None
    while True:
        if position + 2 > len(data) or data[position] != 0xFF:
            raise ValueError("its marker segments are broken before the image data")
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _STANDALONE:
            position += 2
            continue
        if position + 4 > len(data):
            raise ValueError("it ends inside a marker segment")
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if length < 2 or position + 2 + length > len(data):
            raise ValueError("a marker segment runs past the end of the file")
        if marker in _FRAMES:
            if length < 8:
                raise ValueError("its frame header is too short")
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            size = (width, height)
        if marker == 0xDA:  # start of scan: the image data follows
            if size is None:
                raise ValueError("it has no frame header before its image data")
            return size
        if marker == 0xD9:
            raise ValueError("it ends before any image data")
        position += 2 + length


def _check(data: bytes) -> tuple[str, int, int]:
    if data.startswith(_PNG_SIGNATURE):
        media_type, reader = "image/png", _png_size
    elif data.startswith(b"\xff\xd8\xff"):
        media_type, reader = "image/jpeg", _jpeg_size
    else:
        raise ImageProblem(
            "image_invalid", "its content is not a PNG or JPEG image (whatever its name says)"
        )
    kind = "PNG" if media_type == "image/png" else "JPEG"
    try:
        width, height = reader(data)
    except (ValueError, struct.error) as exc:
        raise ImageProblem("image_invalid", f"it begins as a {kind} but {exc}") from None
    if width < 1 or height < 1:
        raise ImageProblem("image_invalid", f"the {kind} says it is {width}×{height} pixels")
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE:
        raise ImageProblem(
            "image_too_large",
            f"the {kind} is {width}×{height} pixels; at most {MAX_IMAGE_SIDE} pixels a side"
            " are accepted",
        )
    return media_type, width, height


def read_image(path: str) -> ImageFile:
    """The PNG or JPEG at ``path`` (absolute), checked by content; raises
    :class:`ImageProblem`."""
    try:
        # Non-blocking: opening a named pipe must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ImageProblem("file_not_found", f"{path} does not exist") from None
    except PermissionError:
        raise ImageProblem(
            "permission_denied", f"{path} cannot be read: permission denied"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise ImageProblem("file_not_found", f"{path} does not exist") from None
        raise ImageProblem("read_failed", f"{path} cannot be read: {exc.strerror}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ImageProblem("not_a_file", f"{path} is not a regular file")
        if status.st_size > MAX_IMAGE_BYTES:
            raise ImageProblem(
                "image_too_large",
                f"{path} holds {status.st_size} bytes; at most {MAX_IMAGE_BYTES} are accepted",
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise ImageProblem("read_failed", f"{path} cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_IMAGE_BYTES:  # it grew while being read
        raise ImageProblem("image_too_large", f"{path} holds more than {MAX_IMAGE_BYTES} bytes")
    media_type, width, height = _check(data)
    return ImageFile(media_type=media_type, width=width, height=height, data=data)

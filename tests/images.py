"""Real PNG and JPEG files for tests, written byte by byte (no imaging library).

:func:`png` writes a truecolour PNG of solid colour (IHDR, one zlib-compressed IDAT,
IEND, each with its CRC). :func:`jpeg` writes a baseline greyscale JPEG of a uniform grey
image: quantization and Huffman tables with one code each, and a scan in which every 8×8
block has a DC difference of 0 and ends at once (EOB) — what any JPEG decoder reads as a
flat mid-grey picture.
"""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(
    width: int, height: int, rgb: tuple[int, int, int] = (200, 40, 40), *, extra: int = 0
) -> bytes:
    """A ``width``×``height`` PNG of colour ``rgb``; ``extra`` bytes of a private ancillary
    chunk make it larger without changing the picture."""
    row = b"\x00" + bytes(rgb) * width  # filter byte 0, then the pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunks = [_chunk(b"IHDR", header)]
    if extra:
        chunks.append(_chunk(b"raWx", b"\x00" * extra))
    chunks.append(_chunk(b"IDAT", zlib.compress(row * height)))
    chunks.append(_chunk(b"IEND", b""))
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def _segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def jpeg(width: int, height: int) -> bytes:
    """A ``width``×``height`` baseline greyscale JPEG, uniformly grey."""
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    quantization = b"\x00" + b"\x01" * 64  # table 0, 8-bit, all ones
    frame = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    # One Huffman code of length 1 ("0") in each table: DC category 0, AC end-of-block.
    lengths = b"\x01" + b"\x00" * 15
    dc = b"\x00" + lengths + b"\x00"
    ac = b"\x10" + lengths + b"\x00"
    scan = b"\x01\x01\x00\x00\x3f\x00"
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    bits = "00" * blocks  # per block: DC difference 0, then end of block
    bits += "1" * (-len(bits) % 8)  # padded with ones
    data = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))
    data = data.replace(b"\xff", b"\xff\x00")  # byte stuffing
    return (
        b"\xff\xd8"
        + _segment(0xE0, app0)
        + _segment(0xDB, quantization)
        + _segment(0xC0, frame)
        + _segment(0xC4, dc)
        + _segment(0xC4, ac)
        + _segment(0xDA, scan)
        + data
        + b"\xff\xd9"
    )

"""builtin/view_image: one local PNG or JPEG, shown to the model as an image block.

The file is checked by its content (:func:`raw_builtin_tools.toolkit.read_image`): a PNG's
chunks or a JPEG's marker segments, its size in bytes and in pixels, within the documented
limits. The result is one text line describing the image, then the image. A file that
cannot be shown is a tool error whose text starts with its code (``image_invalid: ...``).

The agent's model must accept images: the config refuses an agent that selects this tool
with a model whose ``vision`` is not true (``config_invalid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raw_builtin_tools.toolkit import ImageProblem, normalize, path_problem, read_image
from raw_core import ToolContext


def validate_args(args: Mapping[str, Any]) -> str | None:
    """The path must be able to name a file."""
    problem = path_problem(args["path"])
    return None if problem is None else f"path {problem}"


def handler(args: Mapping[str, Any], context: ToolContext) -> dict[str, Any]:
    """Read and check the image; a synchronous handler, so the read runs off the loop."""
    path = normalize(args["path"], str(context.cwd))
    try:
        image = read_image(path)
    except ImageProblem as problem:
        return {
            "is_error": True,
            "content": [{"type": "text", "text": f"{problem.code}: {problem.message}"}],
        }
    line = (
        f"{args['path']}: {image.kind} image, {image.width}×{image.height} pixels,"
        f" {len(image.data)} bytes"
    )
    return {
        "content": [
            {"type": "text", "text": line},
            {"type": "image", "media_type": image.media_type, "data": image.base64()},
        ]
    }

"""The patch format (parser, renderer, applier) and lexical paths, without the dispatcher."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_builtin_tools.toolkit import (
    MAX_OPERATIONS,
    AddFile,
    DeleteFile,
    Hunk,
    HunkMismatch,
    Patch,
    PatchSyntaxError,
    UpdateFile,
    apply_hunks,
    join_lines,
    normalize,
    parse_patch,
    path_problem,
    render_patch,
    split_lines,
)

# --- lexical paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.txt", "/srv/a.txt"),
        ("./protected//x", "/srv/protected/x"),
        ("src/../protected/x", "/srv/protected/x"),
        ("../../../../etc/passwd", "/etc/passwd"),
        ("//etc//passwd", "/etc/passwd"),
        ("/a/./b/../c/", "/a/c"),
        ("dir/.", "/srv/dir"),
        ("..", "/"),
    ],
)
def test_paths_are_absolute_and_lexically_normalized(path: str, expected: str) -> None:
    assert normalize(path, "/srv") == expected


def test_a_cwd_with_a_leading_double_slash_still_gives_one_slash() -> None:
    assert normalize("x", "//srv/./sub") == "/srv/sub/x"


@given(st.text(alphabet="ab./", max_size=20), st.text(alphabet="ab./", max_size=10))
def test_normalized_paths_have_no_dot_or_empty_segments(path: str, cwd: str) -> None:
    result = normalize(path, "/" + cwd)
    assert result.startswith("/")
    assert not result.startswith("//")
    assert result == "/" or not result.endswith("/")
    segments = result.split("/")[1:]
    assert result == "/" or all(s not in ("", ".", "..") for s in segments)
    assert normalize(result, "/elsewhere") == result


@pytest.mark.parametrize(
    ("path", "problem"),
    [("", "empty"), ("  ", "empty"), ("a\x00b", "NUL"), ("dir/", "folder"), ("ok.txt", None)],
)
def test_path_problems(path: str, problem: str | None) -> None:
    found = path_problem(path)
    assert (found is None) if problem is None else (found is not None and problem in found)


# --- lines ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines", "newline"),
    [
        ("", [], False),
        ("\n", [""], True),
        ("a", ["a"], False),
        ("a\nb\n", ["a", "b"], True),
        ("a\x0cb\u2028c\r\n", ["a\x0cb\u2028c\r"], True),
    ],
)
def test_lines_split_on_newline_only(text: str, lines: list[str], newline: bool) -> None:
    assert split_lines(text) == (lines, newline)
    assert join_lines(lines, newline) == text


# --- parsing -------------------------------------------------------------------------------

BEGIN = "*** Begin Patch\n"
END = "*** End Patch\n"


def test_a_full_patch_parses() -> None:
    text = (
        "\n"
        f"{BEGIN}"
        "*** Add File: hello.txt\n"
        "+Hello\n"
        "+\n"
        "*** Update File: src/app.py\n"
        "*** Move to: src/main.py\n"
        "@@ class App:\n"
        "@@ -10,3 +10,3 @@ def greet():\n"
        " context\n"
        "-old\n"
        "+new\n"
        "\n"
        "@@\n"
        " last\n"
        "+appended\n"
        "*** End of File\n"
        "*** Delete File: gone.txt  \n"
        f"{END}"
        "\n"
    )
    assert parse_patch(text) == Patch(
        operations=(
            AddFile(path="hello.txt", lines=("Hello", "")),
            UpdateFile(
                path="src/app.py",
                move_to="src/main.py",
                hunks=(
                    Hunk(
                        anchors=("class App:", "def greet():"),
                        lines=((" ", "context"), ("-", "old"), ("+", "new")),
                    ),
                    Hunk(lines=((" ", "last"), ("+", "appended")), end_of_file=True),
                ),
            ),
            DeleteFile(path="gone.txt"),
        )
    )
    operations = parse_patch(text).operations
    assert [op.line for op in operations] == [3, 6, 18]
    update = operations[1]
    assert isinstance(update, UpdateFile)
    assert [hunk.line for hunk in update.hunks] == [8, 14]


def test_the_first_hunk_may_omit_its_at_at_line_and_empty_lines_are_context() -> None:
    text = f"{BEGIN}*** Update File: a\n x\n\n-y\n+z\n{END}"
    (update,) = parse_patch(text).operations
    assert isinstance(update, UpdateFile)
    assert update.hunks == (Hunk(lines=((" ", "x"), (" ", ""), ("-", "y"), ("+", "z"))),)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "the patch is empty"),
        ("hello\n", 1, "expected '*** Begin Patch'"),
        (BEGIN, 2, "ends without '*** End Patch'"),
        (BEGIN + END, 2, "no file operations"),
        (BEGIN + "*** Add File: \n" + END, 2, "needs a path"),
        (BEGIN + "*** Add File: d/\n" + END, 2, "names a folder"),
        (BEGIN + "*** Add File: a\n+x\n\n+y\n" + END, 5, "'+' line outside"),
        (BEGIN + "*** Add File: a\nx\n" + END, 3, "expected a file header"),
        (BEGIN + "*** Copy File: a\n" + END, 2, "unknown header"),
        (BEGIN + "*** Move to: a\n" + END, 2, "must directly follow"),
        (BEGIN + "*** End of File\n" + END, 2, "must end a hunk"),
        (BEGIN + "@@\n-x\n" + END, 2, "outside an '*** Update File:'"),
        (BEGIN + "*** Update File: a\n" + END, 2, "no hunks and no '*** Move to:'"),
        (BEGIN + "*** Update File: a\n*** Move to: a\n" + END, 3, "names the file being updated"),
        (BEGIN + "*** Update File: a\n@@\n x\n" + END, 3, "changes nothing"),
        (BEGIN + "*** Update File: a\n@@\n" + END, 3, "has no lines"),
        (BEGIN + "*** Update File: a\n@@\n-x\n?y\n" + END, 5, "expected a hunk line"),
        (BEGIN + "*** Update File: a\n@@x\n-x\n" + END, 3, "expected '@@' or '@@ <line"),
        (BEGIN + "*** Update File: a\n-x\n+y\n*** End of File\n-z\n" + END, 6, "expected '@@'"),
        (BEGIN + "*** Update File: a\nfoo\n" + END, 3, "expected '@@' or a hunk line"),
        (BEGIN + "*** Delete File: a\n" + END + "more\n", 4, "after '*** End Patch'"),
        (BEGIN + "*** Delete File: a\x00b\n" + END, 2, "NUL"),
        (BEGIN + "*** Delete File: a\n" * (MAX_OPERATIONS + 1) + END, 18, "at most 16"),
    ],
)
def test_every_syntax_error_names_its_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"patch line {line}: ")
    assert fragment in caught.value.message


# --- round trip (property) -----------------------------------------------------------------

paths = st.from_regex(r"[a-z0-9_./-]{0,12}[a-z0-9_]", fullmatch=True).filter(
    lambda p: p.strip() == p
)
line_text = st.text(st.characters(exclude_characters="\n", exclude_categories=["Cs"]), max_size=16)
anchor_text = (
    st.text(
        st.characters(exclude_characters="\n", exclude_categories=["Cs"]), min_size=1, max_size=12
    )
    .map(str.strip)
    .filter(lambda a: bool(a) and not a.startswith("-"))
)
kinds: st.SearchStrategy[Any] = st.sampled_from([" ", "-", "+"])


@st.composite
def hunks(draw: st.DrawFn) -> Hunk:
    lines = draw(st.lists(st.tuples(kinds, line_text), min_size=1, max_size=5))
    change = draw(st.tuples(st.sampled_from(["-", "+"]), line_text))
    lines.insert(draw(st.integers(0, len(lines))), change)
    while lines and lines[-1] == (" ", ""):  # trailing empty context is a separator
        lines.pop()
    if all(kind == " " for kind, _ in lines):
        lines.append(("+", "x"))
    return Hunk(
        lines=tuple(lines),
        anchors=tuple(draw(st.lists(anchor_text, max_size=2))),
        end_of_file=draw(st.booleans()),
    )


operations = st.one_of(
    st.builds(AddFile, path=paths, lines=st.lists(line_text, max_size=4).map(tuple)),
    st.builds(DeleteFile, path=paths),
    st.builds(UpdateFile, path=paths, hunks=st.lists(hunks(), min_size=1, max_size=3).map(tuple)),
    st.builds(
        UpdateFile,
        path=paths,
        hunks=st.lists(hunks(), max_size=2).map(tuple),
        move_to=paths.map(lambda p: p + "_moved"),
    ),
)


@given(st.lists(operations, min_size=1, max_size=MAX_OPERATIONS))
def test_parse_of_render_round_trips(ops: list[AddFile | DeleteFile | UpdateFile]) -> None:
    patch = Patch(operations=tuple(ops))
    assert parse_patch(render_patch(patch)) == patch


# --- applying hunks -------------------------------------------------------------------------


def update(text: str, patch_body: str) -> str:
    (operation,) = parse_patch(f"{BEGIN}*** Update File: f\n{patch_body}{END}").operations
    assert isinstance(operation, UpdateFile)
    return apply_hunks(text, operation.hunks)


def test_hunks_apply_in_order_after_their_anchors() -> None:
    text = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    assert update(text, "@@ def b():\n-    return 1\n+    return 2\n") == (
        "def a():\n    return 1\n\ndef b():\n    return 2\n"
    )
    assert update(text, "@@\n-    return 1\n+    return 0\n@@\n-    return 1\n+    return 3\n") == (
        "def a():\n    return 0\n\ndef b():\n    return 3\n"
    )


def test_end_of_file_pins_the_hunk_to_the_end() -> None:
    text = "x\ny\nx\n"
    assert update(text, "@@\n-x\n+z\n*** End of File\n") == "x\ny\nz\n"


def test_a_pure_insertion_goes_after_its_anchor_or_at_the_end() -> None:
    assert update("a\nb\n", "@@ a\n+inserted\n") == "a\ninserted\nb\n"
    assert update("a\nb\n", "@@\n+last\n") == "a\nb\nlast\n"
    assert update("", "@@\n+first\n") == "first\n"


def test_context_ignores_trailing_white_space_but_keeps_the_file_text() -> None:
    assert update("keep  \r\nold\r\n", "@@\n keep\n-old\r\n+new\r\n") == "keep  \r\nnew\r\n"


def test_a_file_without_a_final_newline_keeps_it_that_way() -> None:
    assert update("a\nb", "@@\n-b\n+c\n") == "a\nc"


@pytest.mark.parametrize(
    ("text", "body", "line", "fragment"),
    [
        ("a\n", "@@\n-b\n+c\n", 3, "does not occur in the file"),
        ("a\nb\n", "@@\n-b\n+c\n@@\n-a\n+d\n", 6, "It occurs earlier, at line 1"),
        ("a\nb\n", "@@ nothing\n-a\n+c\n", 3, "the anchor 'nothing' does not occur"),
        ("a\nb\n", "@@\n-a\n+c\n*** End of File\n", 3, "does not end the file"),
    ],
)
def test_a_hunk_that_does_not_fit_says_why(text: str, body: str, line: int, fragment: str) -> None:
    with pytest.raises(HunkMismatch) as caught:
        update(text, body)
    assert fragment in str(caught.value)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"hunk at patch line {line}:")

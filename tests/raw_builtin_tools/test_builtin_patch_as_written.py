"""Patches as models write them: blank lines after ``*** End of File``, markers indented by
mistake, line endings the patch does not share with the file, typographic punctuation, and
errors that speak of the file the model read."""

from __future__ import annotations

import pytest

from raw_builtin_tools.toolkit import (
    AddFile,
    HunkMismatch,
    PatchSyntaxError,
    UpdateFile,
    apply_hunks,
    parse_patch,
)

BEGIN = "*** Begin Patch\n"
END = "*** End Patch\n"


def update(text: str, body: str) -> str:
    (operation,) = parse_patch(f"{BEGIN}*** Update File: f\n{body}{END}").operations
    assert isinstance(operation, UpdateFile)
    return apply_hunks(text, operation.hunks)


def mismatch(text: str, body: str) -> str:
    with pytest.raises(HunkMismatch) as caught:
        update(text, body)
    return caught.value.message


# --- a blank line after *** End of File ------------------------------------------------------


@pytest.mark.parametrize("blank", ["\n", "   \n", "\n\t\n"])
def test_a_blank_line_may_follow_end_of_file(blank: str) -> None:
    patch = parse_patch(
        f"{BEGIN}*** Update File: a\n@@\n x\n+y\n*** End of File\n{blank}"
        f"*** Add File: b\n+new\n*** Update File: c\n@@\n-p\n+q\n*** End of File\n{blank}"
        f"@@ anchor\n-r\n+s\n*** End of File\n{blank}{END}"
    )
    kinds = [type(operation) for operation in patch.operations]
    assert kinds == [UpdateFile, AddFile, UpdateFile]
    last = patch.operations[2]
    assert isinstance(last, UpdateFile)
    assert [hunk.anchors for hunk in last.hunks] == [(), ("anchor",)]


def test_a_hunk_line_after_end_of_file_still_needs_its_at_at() -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(f"{BEGIN}*** Update File: a\n@@\n+y\n*** End of File\n\n-z\n{END}")
    assert caught.value.line == 7
    assert "expected '@@'" in caught.value.message


# --- line endings ----------------------------------------------------------------------------


def test_a_line_added_to_a_crlf_file_takes_crlf() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    assert update(text, "@@\n one\n-two\n+2\n+2.5\n") == "one\r\n2\r\n2.5\r\nthree\r\n"
    assert update(text, "@@\n three\n+four\n*** End of File\n") == text + "four\r\n"


def test_a_line_added_to_an_lf_file_takes_lf_whatever_the_patch_sent() -> None:
    assert update("one\ntwo\n", "@@\r\n one\r\n-two\r\n+2\r\n") == "one\n2\n"


def test_a_crlf_file_without_a_final_newline_keeps_it_that_way() -> None:
    assert update("a\r\nb", "@@\n b\n+c\n") == "a\r\nb\r\nc"
    assert update("a\r\nb", "@@\n-b\n") == "a"
    assert update("a\r\nb", "@@\n-a\n+A\n") == "A\r\nb"


def test_the_ending_most_lines_use_wins_in_a_mixed_file() -> None:
    assert update("a\r\nb\r\nc\n", "@@\n c\n+d\n") == "a\r\nb\r\nc\nd\r\n"
    assert update("a\nb\nc\r\n", "@@\n c\n+d\n") == "a\nb\nc\r\nd\n"


def test_a_new_file_keeps_the_patch_text() -> None:
    (add,) = parse_patch(f"{BEGIN}*** Add File: n\n+x\r\n{END}").operations
    assert isinstance(add, AddFile)
    assert add.text == "x\r\n"


# --- markers with leading white space --------------------------------------------------------


def test_markers_are_accepted_with_leading_white_space_where_no_hunk_line_can_stand() -> None:
    patch = parse_patch(
        "  *** Begin Patch\n"
        "  *** Add File: a\n"
        "+x\n"
        " *** Update File: b\n"
        "@@\n"
        "-p\n"
        "+q\n"
        "*** End of File\n"
        "\t*** Delete File: c\n"
        "   *** Update File: d\n"
        "@@\n"
        "-r\n"
        "+s\n"
        " *** End Patch  \n"
    )
    assert [(type(op).__name__, op.path) for op in patch.operations] == [
        ("AddFile", "a"),
        ("UpdateFile", "b"),
        ("DeleteFile", "c"),
        ("UpdateFile", "d"),
    ]
    last = patch.operations[3]
    assert isinstance(last, UpdateFile)
    assert last.hunks[0].lines == (("-", "r"), ("+", "s"))


def test_an_indented_header_inside_a_hunk_is_context_and_the_error_says_so() -> None:
    message = mismatch("p\n", "@@\n-p\n+q\n  *** Update File: g\n@@\n-r\n+s\n")
    assert "'  *** Update File: g' on patch line 6 starts with white space" in message
    assert "read as a context line" in message


def test_an_indented_header_that_leaves_a_hunk_without_changes_says_so() -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(f"{BEGIN}*** Update File: a\n*** Move to: b\n  *** Delete File: c\n{END}")
    assert caught.value.line == 4
    assert "changes nothing" in caught.value.message
    assert "'  *** Delete File: c' on patch line 4 starts with white space" in caught.value.message


# --- errors speak of the file the model read ---------------------------------------------------


def test_a_mismatch_counts_the_lines_of_the_file_as_read() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 11))
    body = "@@\n line 1\n+a\n+b\n+c\n+d\n+e\n@@\n line 4\n-line 99\n+x\n"
    message = mismatch(text, body)
    assert "after line 1, where the previous hunk ends" in message
    assert "the file has 10 lines" in message
    assert "15" not in message


def test_a_mismatch_in_a_one_line_file_reads_well() -> None:
    message = mismatch("only\n", "@@\n-other\n+x\n")
    assert message.startswith("the 1 line this hunk expects (its context and '-' lines) does not")
    assert "occur in the file" in message
    assert "the file has 1 line." in message
    assert "line 0" not in message
    assert "1 lines" not in message


def test_an_earlier_occurrence_is_named_by_its_line_in_the_file_as_read() -> None:
    text = "a\nb\nc\nd\n"
    message = mismatch(text, "@@\n a\n+0\n@@\n-d\n+D\n@@\n-b\n+B\n")
    assert "after line 4, where the previous hunk ends" in message
    assert "It occurs earlier, at line 2" in message
    assert "hunks must follow the file's order" in message


def test_an_anchor_error_names_the_lines_of_the_file_as_read() -> None:
    text = "class A:\n    x = 1\nclass B:\n    y = 2\n"
    found = mismatch(text, "@@ class B:\n-    y = 2\n+    y = 3\n@@ class A:\n-    x = 1\n+    x\n")
    assert "the anchor 'class A:' does not occur after line 4, where the previous hunk ends" in (
        found
    )
    assert "it occurs earlier, at line 1" in found
    missing = mismatch(text, "@@ class C:\n-    y = 2\n+    y = 3\n")
    assert "the anchor 'class C:' does not occur in the file" in missing
    nested = mismatch(text, "@@ class A:\n@@ def f():\n-    x = 1\n+    x\n")
    assert "the anchor 'def f():' does not occur after the anchor 'class A:' at line 1" in nested


def test_a_near_miss_in_indentation_is_pointed_at() -> None:
    text = "def f():\n    if x:\n        return 1\n"
    message = mismatch(text, "@@\n    if x:\n-       return 1\n+       return 2\n")
    assert "They match at line 2 if leading white space is ignored" in message


# --- typographic punctuation -------------------------------------------------------------------


def test_unicode_dashes_quotes_and_spaces_match_their_ascii_forms_as_a_last_resort() -> None:
    text = "# top\u2011level \u2013 see \u201cnotes\u201d\nvalue\u00a0=\u00a01\nend\n"
    assert update(text, '@@\n # top-level - see "notes"\n-value = 1\n+value = 2\n') == (
        "# top\u2011level \u2013 see \u201cnotes\u201d\nvalue = 2\nend\n"
    )
    assert update(text, "@@ value = 1\n-end\n+END\n") == text.replace("end\n", "END\n")


def test_an_exact_match_wins_over_a_unicode_one() -> None:
    text = "a \u2013 b\nx\na - b\nx\n"
    assert update(text, "@@\n a - b\n-x\n+y\n") == "a \u2013 b\nx\na - b\ny\n"

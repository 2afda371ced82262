"""The shared command-line conventions (sims/cli/common.py): output paths, user files, tables."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from acp_lifecycle.sims.cli.common import (
    Column,
    ListOf,
    MapOf,
    UsageError,
    check_shape,
    input_file,
    load_json,
    output_dir,
    output_file,
    print_table,
    table_layout,
)

#: A directory even root cannot create files in (sysfs), when there is one.
UNWRITABLE = Path("/sys")
needs_unwritable = pytest.mark.skipif(not UNWRITABLE.is_dir() or os.access(UNWRITABLE, os.W_OK) and os.geteuid() != 0,
                                      reason="no directory here that refuses writes")


def one_line(excinfo) -> str:
    text = str(excinfo.value)
    assert text and "\n" not in text
    return text


# --- output paths -------------------------------------------------------------------


def test_output_file_accepts_a_new_file_in_an_existing_directory_and_writes_nothing(tmp_path):
    assert output_file(tmp_path / "x.svg", option="--diagram") == tmp_path / "x.svg"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda t: t / "missing" / "x.png", "directory {t}/missing does not exist"),
        (lambda t: t / "file" / "x.png", "{t}/file is not a directory"),
        (lambda t: t / "dir", "is a directory; give a file name"),
        (lambda t: t / "file", "exists; pass --force to overwrite it"),
        (lambda t: "", "give a file name"),
    ],
)
def test_output_file_refuses_with_one_line(tmp_path, make, needle):
    (tmp_path / "file").write_text("mine")
    (tmp_path / "dir").mkdir()
    with pytest.raises(UsageError) as e:
        output_file(make(tmp_path), option="--out")
    assert needle.format(t=tmp_path) in one_line(e)
    assert (tmp_path / "file").read_text() == "mine"


def test_output_file_overwrites_only_with_force_and_checks_the_suffix(tmp_path):
    (tmp_path / "x.png").write_text("old")
    assert output_file(tmp_path / "x.png", force=True) == tmp_path / "x.png"
    with pytest.raises(UsageError) as e:
        output_file(tmp_path / "x.gif", option="--diagram", suffixes=(".png", ".svg"))
    assert "ending in .png, .svg" in one_line(e)


@needs_unwritable
def test_output_paths_in_an_unwritable_directory_are_refused():
    with pytest.raises(UsageError) as e:
        output_file(UNWRITABLE / "x.png", option="--diagram")
    assert "cannot write into /sys" in one_line(e)
    with pytest.raises(UsageError) as e:
        output_dir(UNWRITABLE / "new", option="--out")
    assert "cannot write into /sys" in one_line(e)


def test_output_dir_takes_a_new_or_empty_directory_and_a_non_empty_one_only_when_told(tmp_path):
    assert output_dir(tmp_path / "new") == tmp_path / "new"
    assert not (tmp_path / "new").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("x")
    with pytest.raises(UsageError) as e:
        output_dir(tmp_path / "full", option="--diagrams")
    assert "is not empty; pass --force" in one_line(e)
    assert output_dir(tmp_path / "full", force=True) and output_dir(tmp_path / "full", generated=True)
    (tmp_path / "f").write_text("x")
    for bad, needle in ((tmp_path / "f", "is a file, not a directory"), (tmp_path / "f" / "sub", "is not a directory"),
                        (tmp_path / "a" / "b", "does not exist")):
        with pytest.raises(UsageError) as e:
            output_dir(bad, option="--out")
        assert needle in one_line(e)


# --- user files -------------------------------------------------------------------


def test_input_file_refuses_what_is_not_a_readable_file(tmp_path):
    for bad, needle in ((tmp_path / "nope", "no such file"), (tmp_path, "is a directory"), ("", "give a file name")):
        with pytest.raises(UsageError) as e:
            input_file(bad, option="--schema")
        assert needle in one_line(e)


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"[1,2,3]", "is not a verdict matrix: the top level is an array, expected an object"),
        (b"{}", "is not a verdict matrix: the top level has no 'config'"),
        (b'{"config": "default", "variants": []}', "'variants' is an array, expected an object"),
        (b'{"config": "default", "variants": {}}', "'variants' has 0 entries, expected at least 1"),
        (b'{"config": "default", "variants": {"rfd": 3}}', "'variants'['rfd'] is an integer, expected an object"),
        (b'{"config": 1, "variants": {}}', "'config' is an integer, expected a string"),
        (b"{not json", "is not JSON (line 1, column 2"),
        (b"\xff\xfe{}", "is not UTF-8 text"),
    ],
)
def test_load_json_checks_the_shape_with_one_line(tmp_path, content, needle):
    f = tmp_path / "m.json"
    f.write_bytes(content)
    with pytest.raises(UsageError) as e:
        load_json(f, option="--verdicts", what="a verdict matrix",
                  shape={"config": str, "variants": MapOf(MapOf({"verdict": str}), min=1)})
    assert needle in one_line(e)


def test_load_json_accepts_a_byte_order_mark_and_returns_the_data(tmp_path):
    f = tmp_path / "m.json"
    f.write_bytes(b'\xef\xbb\xbf{"a": [1, 2]}')
    assert load_json(f, shape={"a": ListOf(int)}) == {"a": [1, 2]}


def test_check_shape_distinguishes_booleans_from_integers():
    with pytest.raises(ValueError, match="true or false, expected an integer"):
        check_shape(True, int)
    check_shape(True, bool)


# --- tables -----------------------------------------------------------------------

COLUMNS = [Column("property", key=True), Column("kind"), Column("verdict"), Column("member")]
ROWS = [["sometimes_cancel_request_after_insertion_race", "sometimes", "[green]reached[/]", "cancel-race"],
        ["success_only_after_insertion", "always", "[yellow]open question confirmed[/]", ""]]


def render(width: int, **kw) -> list[str]:
    buf = io.StringIO()
    print_table(Console(file=buf, width=width, color_system=None), COLUMNS, ROWS, **kw)
    return buf.getvalue().splitlines()


def test_a_table_that_fits_is_printed_as_it_is():
    lines = render(140)
    assert table_layout(COLUMNS, ROWS, 140) is None
    assert lines[0].split() == ["property", "┃", "kind", "┃", "verdict", "┃", "member"]
    assert "sometimes_cancel_request_after_insertion_race │ sometimes │ reached" in lines[2]


def test_a_table_that_fits_when_wrapped_wraps_free_text_and_never_cuts_a_word():
    widths = table_layout(COLUMNS, ROWS, 95)
    assert isinstance(widths, list) and sum(widths) + 9 <= 95
    text = "\n".join(render(95))
    assert "…" not in text and "sometimes_cancel_request_after_insertion_race" in text
    assert all(cell_len(line) <= 95 for line in text.splitlines())


def test_a_table_too_wide_even_wrapped_becomes_a_list_with_every_cell():
    lines = render(60, legend="legend here")
    assert table_layout(COLUMNS, ROWS, 60) == "list"
    assert lines[:2] == ["sometimes_cancel_request_after_insertion_race",
                         "  kind sometimes  verdict reached  member cancel-race"]
    assert lines[2] == "success_only_after_insertion"
    assert lines[3].strip() == "kind always  verdict open question confirmed"  # the empty member is left out
    assert lines[-1] == "legend here"
    assert all(cell_len(line) <= 60 for line in lines)


def test_a_grouped_list_shows_the_columns_that_share_a_value_together():
    buf = io.StringIO()
    cols = [Column("property", key=True)] + [Column(x) for x in "ABCD"]
    print_table(Console(file=buf, width=20, color_system=None), cols, [["p", "holds", "✗ 2", "holds", "n/a"]], group=True)
    assert buf.getvalue().splitlines() == ["p", "  holds A C  ✗ 2 B", "  n/a D"]

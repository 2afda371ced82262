"""What every subcommand shares, and the conventions every subcommand follows.

Conventions (tests/test_cli_inputs.py checks them on every subcommand the
parser knows, so commands added later are covered too):

* **Bad input is one line and exit 2.** Raise :class:`UsageError` (or
  ``ConfigError``/``TooLarge``); ``main`` prints ``acp-lifecycle: error: ...``
  on stderr. Never let an ``OSError``, ``KeyError`` or ``json`` error escape.
* **Output paths are checked before any work starts**: :func:`output_file`
  and :func:`output_dir` refuse a missing parent directory, a directory where
  a file is expected (and the reverse), an unwritable place, and an existing
  file unless the user passed ``--force`` (:func:`add_force`).
* **User-supplied files are validated with one line**: :func:`input_file`
  (exists, is a file, readable) and :func:`load_json` (that, plus JSON, plus a
  shape check written with :func:`check_shape`).
* **Options that do not apply to a mode are refused**, not ignored:
  :func:`refuse_options`.
* **``--json`` on every subcommand that prints a result** (:func:`add_json`,
  :func:`print_json`): one record per line on stdout (a listing: one element
  per line; a result: one document on one line), nothing else on stdout;
  notes such as "wrote FILE" go to stderr.
* **Output for people fits the terminal**: its width, ``$COLUMNS`` when set,
  else 80 columns (a pipe, a file, a log). :func:`print_table` keeps the table
  when it fits, wraps the free-text columns when that is enough, and
  otherwise switches to a list layout; no cell is ever cut. Long lines such as
  a trace's JSON-RPC messages go through :func:`print_lines` (wrapped, the
  JSON broken after a comma, continuation lines indented).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from acp_lifecycle.sims.errors import UsageError  # defined below the searches, which raise it too

__all__ = [
    "UsageError",
    "Parser",
    "console",
    "screen",
    "add_json",
    "print_json",
    "add_force",
    "path_argument",
    "positive_int",
    "output_file",
    "output_dir",
    "checkout",
    "input_file",
    "load_json",
    "check_shape",
    "ListOf",
    "MapOf",
    "refuse_options",
    "Column",
    "print_table",
    "print_lines",
    "variant_names",
    "variant_progress",
    "add_workers",
    "workers_of",
]

#: Width for output for people that goes to a pipe or a file when ``$COLUMNS``
#: is unset (a log, a pager; programs read ``--json``).
PIPE_WIDTH = 80
#: What :func:`console` still uses on a pipe: ``trace`` prints with it, and its
#: output is left as it was until its owner moves it to :func:`screen`.
WIDE_PIPE_WIDTH = 140


class Parser(argparse.ArgumentParser):
    #: A command whose first word names an action (``bridge serve``, ``schema pull``): each action's
    #: own help, built when asked, so that ``ACTION --help`` prints it and not the command's.
    action_helps: dict[str, Callable[[], str]] | None = None

    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(message)

    def parse_known_args(self, args=None, namespace=None):
        if self.action_helps:
            argv = list(sys.argv[1:] if args is None else args)
            head = argv[: argv.index("--")] if "--" in argv else argv
            action = next((a for a in head if a in self.action_helps), None)
            if action is not None and {"-h", "--help"} & set(head):
                self._print_message(self.action_helps[action](), sys.stdout)
                self.exit()
        return super().parse_known_args(args, namespace)


def action_help(prog: str, description: str, add: Callable[[argparse.ArgumentParser], None],
                usage: str | None = None) -> str:
    """The help of one action of a command (:attr:`Parser.action_helps`): ``add`` puts its options
    on a parser of its own."""
    p = argparse.ArgumentParser(prog=prog, description=description, usage=usage)
    add(p)
    return p.format_help()


def screen(stderr: bool = False, pipe_width: int = PIPE_WIDTH) -> Console:
    """A console for people: the terminal's width, ``$COLUMNS`` when set, else
    ``pipe_width`` (80) on a pipe or a file (programs read ``--json``)."""
    probe = Console(stderr=stderr)
    given = os.environ.get("COLUMNS", "").isdigit()
    width = None if probe.is_terminal or given else pipe_width
    # soft_wrap off: prose wraps at word boundaries; print JSON lines with soft_wrap=True (kept whole)
    return Console(highlight=False, soft_wrap=False, width=width, stderr=stderr)


def console(stderr: bool = False) -> Console:
    """:func:`screen` at :data:`WIDE_PIPE_WIDTH` on a pipe (``trace``'s, for now)."""
    return screen(stderr, WIDE_PIPE_WIDTH)


# --- --json -------------------------------------------------------------------


def add_json(p: argparse.ArgumentParser,
             help: str = "print the result as JSON for programs: one record per line on stdout") -> None:
    p.add_argument("--json", action="store_true", help=help)


def print_json(data: Any) -> None:
    """The result for a program, one record per line: a listing (a list) is one element per
    line (JSON Lines), any other result one JSON document on one line."""
    for record in data if isinstance(data, list) else [data]:
        print(json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str))


# --- arguments the tests can drive with bad values ---------------------------------

#: The kinds of path arguments (``path_argument``): what a test feeds each one.
PATH_KINDS = ("in-file", "in-json", "out-file", "out-dir")


def path_argument(p: argparse.ArgumentParser, *flags: str, kind: str, suffixes: Sequence[str] = (), **kw) -> argparse.Action:
    """Add a path argument and tag it with its ``kind`` (one of :data:`PATH_KINDS`),
    so that tests/test_cli_inputs.py feeds it missing, existing, unreadable and
    misshapen paths. Check the value with :func:`input_file`, :func:`load_json`,
    :func:`output_file` or :func:`output_dir` before any work."""
    if kind not in PATH_KINDS:
        raise ValueError(f"kind must be one of {PATH_KINDS}")
    kw.setdefault("metavar", "DIR" if kind == "out-dir" else "FILE")
    action = p.add_argument(*flags, **kw)
    action.path_kind = kind
    action.suffixes = tuple(suffixes)
    return action


def port_number(lowest: int = 1) -> Callable[[str], int]:
    """An argparse ``type``: a TCP port from ``lowest`` (0: a free one) to 65535, refused in the one
    wording every ``--port`` uses (``provider``'s own in cli/probe.py says the same)."""
    def port(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
        if not lowest <= n <= 65535:
            raise argparse.ArgumentTypeError(f"a port is between {lowest} and 65535, not {n}")
        return n
    return port


def add_workers(p, what: str) -> None:
    """``--workers N``: how many processes run ``what`` side by side (default: the cores)."""
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help=f"processes running {what} side by side (default: the cores available)")


def workers_of(args) -> int:
    """``--workers``, or the cores this process may run on."""
    from acp_lifecycle.sims.search.engine import default_workers

    return args.workers if getattr(args, "workers", None) is not None else default_workers()


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be positive, not {n}")
    return n


# --- output paths -------------------------------------------------------------------


def add_force(p: argparse.ArgumentParser, what: str = "existing files") -> None:
    p.add_argument("--force", action="store_true", help=f"overwrite {what}")


def _label(option: str | None, path) -> str:
    return f"{option} {path}" if option else str(path)


def _check_parent(parent: Path, label: str) -> None:
    """The directory ``parent`` exists, is a directory and can be written into."""
    for anc in (parent, *parent.parents):
        if anc.exists():
            if not anc.is_dir():
                raise UsageError(f"{label}: {anc} is not a directory")
            if anc != parent:
                raise UsageError(f"{label}: directory {parent} does not exist")
            break
    else:  # pragma: no cover - the root always exists
        raise UsageError(f"{label}: directory {parent} does not exist")
    try:  # os.access says yes to root even where writing fails (/sys, read-only mounts)
        fd, probe = tempfile.mkstemp(prefix=".acp-lifecycle-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"{label}: cannot write into {parent} ({e.strerror or e})") from None


def output_file(path: str | os.PathLike, *, option: str | None = None, force: bool = False,
                suffixes: Sequence[str] = ()) -> Path:
    """Check, before any work, that ``path`` can be written as a new file.

    Refuses an empty name, a name without one of ``suffixes``, a directory, an
    existing file unless ``force``, and a parent that is missing, not a
    directory or not writable. Returns the path; writes nothing.
    """
    label = _label(option, path)
    if not str(path).strip():
        raise UsageError(f"{option or 'output'}: give a file name")
    p = Path(path)
    if suffixes and not p.name.endswith(tuple(suffixes)):
        raise UsageError(f"{label}: choose a file name ending in {', '.join(suffixes)}")
    if p.is_dir():
        raise UsageError(f"{label}: is a directory; give a file name")
    if p.exists() or p.is_symlink():
        if not force:
            raise UsageError(f"{label}: exists; pass --force to overwrite it")
        if not os.access(p, os.W_OK):
            raise UsageError(f"{label}: cannot be overwritten (permission denied)")
    _check_parent(p.parent if str(p.parent) else Path("."), label)
    return p


def output_dir(path: str | os.PathLike, *, option: str | None = None, force: bool = False,
               generated: bool = False) -> Path:
    """Check, before any work, that files can be written into the directory ``path``.

    The directory may not exist yet (its parent must); an existing one must be
    writable and, unless ``force`` or ``generated`` (a directory of generated
    files the command owns, such as ``diagrams/``), empty. Writes nothing.
    """
    label = _label(option, path)
    if not str(path).strip():
        raise UsageError(f"{option or 'output'}: give a directory name")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{label}: is a file, not a directory")
    if p.is_dir():
        if not (force or generated) and any(p.iterdir()):
            raise UsageError(f"{label}: directory is not empty; pass --force to write into it")
        _check_parent(p, label)
    else:
        _check_parent(p.parent if str(p.parent) else Path("."), label)
    return p


def checkout() -> Path | None:
    """The current directory when it is the acp-lifecycle project's checkout (its
    pyproject.toml names the project), else None: generated files (docs/,
    diagrams/) are written by default only there."""
    import tomllib

    here = Path.cwd()
    try:
        data = tomllib.loads((here / "pyproject.toml").read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return here if data.get("project", {}).get("name") == "acp-lifecycle" else None


# --- input files ---------------------------------------------------------------------


def input_file(path: str | os.PathLike, *, option: str | None = None) -> Path:
    """Check that ``path`` is an existing, readable regular file (one-line error if not)."""
    label = _label(option, path)
    if not str(path).strip():
        raise UsageError(f"{option or 'input'}: give a file name")
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{label}: is a directory, not a file")
    if not p.exists():
        raise UsageError(f"{label}: no such file")
    try:
        with p.open("rb") as f:
            f.read(1)
    except OSError as e:
        raise UsageError(f"{label}: cannot read it ({e.strerror or e})") from None
    return p


class ListOf:
    """Shape: a JSON array whose items have shape ``item`` (``min`` items at least)."""

    def __init__(self, item, min: int = 0):
        self.item, self.min = item, min


class MapOf:
    """Shape: a JSON object whose values have shape ``value`` (``min`` entries at least)."""

    def __init__(self, value, min: int = 0):
        self.value, self.min = value, min


_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number",
               bool: "true or false", type(None): "null"}


def _name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_name(x) for x in t)
    return _JSON_NAMES.get(t, t.__name__)


def check_shape(data: Any, shape: Any, where: str = "the top level") -> None:
    """Raise ``ValueError`` (one line, naming where) unless ``data`` has ``shape``.

    A shape is a type (or tuple of types), ``{key: shape}`` (an object with at
    least those keys), :class:`ListOf` or :class:`MapOf`, or a callable that
    raises ``ValueError`` itself.
    """
    if isinstance(shape, type) or isinstance(shape, tuple):
        ok = isinstance(data, shape) and not (isinstance(data, bool) and bool not in (shape if isinstance(shape, tuple) else (shape,)))
        if not ok:
            raise ValueError(f"{where} is {_name(type(data))}, expected {_name(shape)}")
    elif isinstance(shape, dict):
        check_shape(data, dict, where)
        for key, sub in shape.items():
            if key not in data:
                raise ValueError(f"{where} has no {key!r}")
            check_shape(data[key], sub, f"{where}[{key!r}]" if where != "the top level" else repr(key))
    elif isinstance(shape, ListOf):
        check_shape(data, list, where)
        if len(data) < shape.min:
            raise ValueError(f"{where} has {len(data)} item(s), expected at least {shape.min}")
        for i, item in enumerate(data):
            check_shape(item, shape.item, f"{where}[{i}]" if where != "the top level" else f"item {i}")
    elif isinstance(shape, MapOf):
        check_shape(data, dict, where)
        if len(data) < shape.min:
            raise ValueError(f"{where} has {len(data)} entr{'y' if len(data) == 1 else 'ies'}, expected at least {shape.min}")
        for key, value in data.items():
            check_shape(value, shape.value, f"{where}[{key!r}]" if where != "the top level" else repr(key))
    elif callable(shape):
        shape(data)
    else:  # pragma: no cover - a programming error
        raise TypeError(f"not a shape: {shape!r}")


def load_json(path: str | os.PathLike, *, option: str | None = None, what: str = "the expected JSON",
              shape: Any = None) -> Any:
    """Read a user-supplied JSON file; any problem is a one-line :class:`UsageError`.

    ``what`` names the expected content in the message ("a verdict matrix");
    ``shape`` (see :func:`check_shape`) is checked before the data is used. A
    UTF-8 byte order mark is accepted.
    """
    p = input_file(path, option=option)
    label = _label(option, path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UsageError(f"{label}: is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise UsageError(f"{label}: cannot read it ({e.strerror or e})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{label}: is not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise UsageError(f"{label}: is nested too deeply") from None
    if shape is not None:
        try:
            check_shape(data, shape)
        except ValueError as e:
            raise UsageError(f"{label}: is not {what}: {e}") from None
    return data


# --- options that do not apply -------------------------------------------------------


def _given(parser: argparse.ArgumentParser, args, option: str) -> bool:
    action = parser._option_string_actions[option]
    return getattr(args, action.dest) != action.default


def refuse_options(args, mode: str, *options: str) -> None:
    """Refuse each of ``options`` (e.g. ``"--max-nodes"``) the user gave: they do
    not apply to ``mode`` (e.g. "without --model"). Needs ``args._parser``,
    which ``main`` sets to the subcommand's parser."""
    parser = getattr(args, "_parser", None)
    if parser is None:  # called outside main (a test building its own Namespace)
        return
    given = [o for o in options if _given(parser, args, o)]
    if given:
        raise UsageError(f"{given[0]} does not apply {mode}")


# --- tables ------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A table column. ``key``: the column that names each row (the heading of
    an entry in the list layout). ``label``: in the list layout, show the value
    as ``header value`` (False: the value alone on its own line)."""

    header: str
    justify: str = "left"
    key: bool = False
    label: bool = True


#: Between two columns: one space, the rule, one space (show_edge=False, pad_edge=False).
_SEPARATOR = 3


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _widths(cell: str) -> tuple[int, int]:
    """(natural width, narrowest width without cutting a word) of a cell."""
    lines = _plain(cell).split("\n")
    natural = max(cell_len(line) for line in lines)
    narrow = max((cell_len(w) for line in lines for w in line.split()), default=0)
    return natural, narrow


#: A wrapped column narrower than this (and than its natural width) reads badly:
#: the list layout is used instead.
_NARROWEST_WRAPPED = 20


def table_layout(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int] | None | str:
    """How a table fits in ``width``: None (as it is), a list of column widths
    (wrapped, no word cut), or ``"list"`` (even wrapped it would not fit)."""
    n = len(columns)
    natural, narrow = [0] * n, [0] * n
    for row in [[c.header for c in columns], *rows]:
        for i, cell in enumerate(row):
            a, b = _widths(cell)
            natural[i], narrow[i] = max(natural[i], a), max(narrow[i], b)
    seps = _SEPARATOR * (n - 1)
    if sum(natural) + seps <= width:
        return None
    if sum(narrow) + seps > width:
        return "list"
    # give each column its narrowest width, then share the rest out in
    # proportion to what each still lacks of its natural width
    spare = width - seps - sum(narrow)
    lack = [a - b for a, b in zip(natural, narrow)]
    total = sum(lack)
    out = [b + (spare * d) // total for b, d in zip(narrow, lack)]
    if any(w < min(a, _NARROWEST_WRAPPED) for w, a in zip(out, natural)):
        return "list"
    return out


def print_table(out: Console, columns: Sequence[Column], rows: Iterable[Sequence[str]], *, title: str | None = None,
                legend: str | Sequence[str] | None = None, group: bool = False) -> None:
    """Print a table that stays readable at any width (see the module's conventions).

    Cells are rich markup; a cell may hold several lines (the first is the
    value, the others are notes under it). ``legend``: a line, or items kept
    whole when the legend wraps. ``group``: in the list layout, show
    the columns that share a value together (``holds A B D``), for matrices.
    """
    rows = [list(r) for r in rows]
    layout = table_layout(columns, rows, out.width)
    if layout == "list":
        _print_list(out, columns, rows, title, group)
    else:
        t = Table(show_edge=False, pad_edge=False, title=title)
        for i, c in enumerate(columns):
            kw = {"width": layout[i], "overflow": "fold"} if layout else {}
            t.add_column(c.header, justify=c.justify, **kw)
        for r in rows:
            t.add_row(*r)
        out.print(t, soft_wrap=False)
    if isinstance(legend, str):
        out.print(legend, highlight=False, soft_wrap=False)
    elif legend:  # items packed whole into lines ("A = rfd  B = rfd+2.4.0 ...")
        line = ""
        for item in legend:
            if line and cell_len(line) + 2 + cell_len(item) > out.width:
                out.print(line, highlight=False, markup=False, soft_wrap=True)
                line = ""
            line = f"{line}  {item}" if line else item
        if line:
            out.print(line, highlight=False, markup=False, soft_wrap=True)


def print_lines(out: Console, lines: Iterable[str]) -> None:
    """Plain lines (a trace's steps and JSON-RPC messages, notes), each wrapped to the
    console's width (:func:`acp_lifecycle.sims.traces.wrap_line`), no markup."""
    from acp_lifecycle.sims.traces import wrap_line

    for line in lines:
        for part in wrap_line(line, out.width):
            out.print(part, markup=False, highlight=False, soft_wrap=True)


def command_lines(command: str, width: int, indent: str = "  ") -> list[str]:
    """A shell command for a person to copy, as lines of at most ``width`` columns where the
    arguments allow: broken only between arguments, each line but the last ending in `` \\``
    (a shell reads them as one line); an option stays with its value, and an argument is never
    cut, however long."""
    import shlex

    words: list[str] = []
    for arg in shlex.split(command):  # an option and its value stay together
        if words and words[-1].startswith("-") and " " not in words[-1] and not arg.startswith("-"):
            words[-1] += " " + shlex.quote(arg)
        else:
            words.append(shlex.quote(arg))
    lines, current = [], indent
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = indent * 2 + word
        else:
            current += (" " if current.strip() else "") + word
    return lines + [current]


def _print_list(out: Console, columns: Sequence[Column], rows: list[list[str]], title: str | None, group: bool) -> None:
    """One entry per row: the key cell as a heading, the other cells under it."""
    key = next((i for i, c in enumerate(columns) if c.key), 0)
    if title:
        out.print(title, highlight=False, soft_wrap=False)
    room = max(out.width - 2, 20)
    for r in rows:
        head, *notes = r[key].split("\n")
        out.print(Text.from_markup(head, style="bold"), highlight=False, soft_wrap=True)
        body = [Text.from_markup(note.strip()) for note in notes]
        pairs: list[Text] = []
        grouped: dict[str, list[str]] = {}
        for i, (c, cell) in enumerate(zip(columns, r)):
            if i == key or not _plain(cell).strip():
                continue
            if group:
                grouped.setdefault(cell, []).append(c.header)
            elif c.label:
                pairs.append(Text.from_markup(f"[dim]{c.header}[/] {cell}"))
            else:
                body.append(Text.from_markup(cell))
        pairs += [Text.from_markup(cell) + Text(" " + " ".join(headers)) for cell, headers in grouped.items()]
        line = Text()
        for pair in pairs:  # pack whole pairs into lines; never split a pair between two lines
            if line.plain and cell_len(line.plain) + 2 + cell_len(pair.plain) > room:
                body.append(line)
                line = Text()
            line = line + Text("  ") + pair if line.plain else pair
        if line.plain:
            body.append(line)
        for text in body:
            for part in text.wrap(out, room):
                part.rstrip()
                out.print(Text("  ") + part, highlight=False, soft_wrap=True)


# --- shared by several commands ---------------------------------------------------


def variant_names(args) -> list[str] | None:
    from acp_lifecycle.model.variants import get_variant

    return [get_variant(n).name for n in args.variant] if args.variant else None


def variant_progress(err: Console, names: list[str]):
    """A progress bar over variants on stderr (only on a terminal); ``on_variant(name)``: that one is checked
    (they are checked side by side, so in any order)."""
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err, transient=True, disable=not err.is_terminal)
    task = bar.add_task("variants", total=len(names))

    def on_variant(name):
        bar.update(task, description=f"variants ({name} checked)", advance=1)

    return bar, on_variant


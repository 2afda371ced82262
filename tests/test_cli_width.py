"""Output for people fits the terminal (80 columns on a pipe, $COLUMNS when set); output for
programs (--json) is one record per line. Every command that prints tables, piped."""

from __future__ import annotations

import json

import pytest
from rich.cells import cell_len

from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.render import wrap_line

TABLES = [
    ["check", "--config", "failures"],
    ["check", "--bug", "never-echo"],  # its counterexamples' JSON-RPC messages too
    ["variants", "--config", "tiny"],
    ["variants", "--list"],
    ["mutate", "--list"],
    ["mutate", "--mutant", "never-echo", "--config", "tiny"],
    ["configs"],
    ["bugs"],
    ["scenario", "--list"],
    ["scenario", "cancel-request-wins"],
    ["diff", "rfd", "ack-at-receipt", "--config", "failures"],
]


def _widest(text: str) -> int:
    return max(cell_len(line) for line in text.splitlines())


@pytest.mark.parametrize("argv", TABLES, ids=" ".join)
def test_piped_output_fits_80_columns_or_columns_and_json_is_one_record_per_line(argv, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    code = main(argv)
    out = capsys.readouterr().out
    assert _widest(out) <= 80 and _widest(out) >= 60, out  # fits, and uses the room it has
    monkeypatch.setenv("COLUMNS", "64")
    assert main(argv) == code
    assert _widest(capsys.readouterr().out) <= 64
    monkeypatch.delenv("COLUMNS")
    assert main([*argv, "--json"]) == code
    lines = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in lines]  # each line a whole record
    assert records and all(isinstance(r, dict) for r in records)


def test_a_listing_as_json_is_one_element_per_line(capsys):
    from acp_lifecycle.sims.configs import SUITES

    assert main(["configs", "--json"]) == 0
    assert [json.loads(line)["name"] for line in capsys.readouterr().out.splitlines()] == list(SUITES)


@pytest.mark.parametrize("width", [20, 40, 80])
def test_a_long_json_rpc_line_wraps_after_commas_and_joins_back(width):
    msg = ('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
           '{"sessionUpdate":"user_message","messageId":"msg_1","content":[{"type":"text","text":"a b"}]}}}')
    line = f"       agent -> client 0: {msg}"
    parts = wrap_line(line, width)
    assert len(parts) > 1 and all(len(p) <= width for p in parts)
    assert all(p.startswith(" " * min(11, width // 2)) for p in parts[1:])  # continuation indented
    assert "".join(p.strip() if i else p for i, p in enumerate(parts)).replace(" ", "") == line.replace(" ", "")
    if width >= 40:  # room enough: every break is after JSON's , : { [ or a space (nothing is cut)
        assert all(p.rstrip()[-1] in ",:{[" or (p.strip() + " ") in line for p in parts[:-1])
    assert any(p.rstrip().endswith(",") for p in parts[:-1])

"""Sequence charts of a trace: one lane per client and one for the agent, one arrow per JSON-RPC message."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from acp_lifecycle.model.system import System
from acp_lifecycle.model.wire import step_messages

from acp_lifecycle.sims.traces import action_text

from .base import Trace
from .drawing import FONT, LINE_HEIGHT, save_figure, text_size

# ---------------------------------------------------------------------------
# Sequence charts
# ---------------------------------------------------------------------------


def message_summary(msg: dict) -> str:
    """One line for a JSON-RPC message: ``session/prompt id=1 "a"``, ``result id=1 messageId=msg_1``."""
    mid = msg.get("id")
    if "method" in msg:
        m, p = msg["method"], msg.get("params", {})
        if m == "session/prompt":
            return f"session/prompt id={mid} " + " ".join(json.dumps(b.get("text", "")) for b in p.get("prompt", []))
        if m == "$/cancel_request":
            return f"$/cancel_request requestId={p.get('requestId')}"
        if m == "session/resume":
            return f"session/resume id={mid}" + (" replayFrom=start" if "replayFrom" in p else "")
        if m == "session/update":
            u = p.get("update", {})
            kind = u.get("sessionUpdate", "?")
            if kind == "user_message":
                texts = " ".join(json.dumps(c.get("text", "")) for c in u.get("content", [])) or "[]"
                tok = u.get("_meta", {}).get("correlationToken")
                return f"session/update user_message {u.get('messageId')} {texts}" + (f" token={tok}" if tok else "")
            if kind == "user_message_chunk":
                return f"session/update user_message_chunk {u.get('messageId')} {json.dumps(u['content'].get('text', ''))}"
            if kind == "state_update":
                text = f"session/update state_update {u.get('state')}"
                if u.get("stopReason"):
                    text += f" {u['stopReason']}"
                if u.get("error"):
                    text += f" (error {u['error'].get('code')})"
                return text
            if kind in ("tool_call", "tool_call_update"):
                return f"session/update {kind} {u.get('toolCallId')} {u.get('status')}"
            if kind == "notice":
                return f"session/update notice {u.get('severity', '')}".rstrip()
            return f"session/update {kind}"
        return m + (f" id={mid}" if mid is not None else "")
    if "result" in msg:
        r = msg["result"]
        if isinstance(r, dict) and "messageId" in r:
            return f"result id={mid} messageId={r['messageId']}"
        if isinstance(r, dict) and "outcome" in r:
            return f"result id={mid} {r['outcome'].get('optionId', r['outcome'].get('outcome'))}"
        return f"result id={mid} {json.dumps(r, separators=(',', ':'))}"
    if "error" in msg:
        e = msg["error"]
        return f"error id={mid} {e.get('code')} {e.get('message', '')}".rstrip()
    return json.dumps(msg, separators=(",", ":"))


def _in_transit(pre: System, c: int) -> list[str]:
    from acp_lifecycle.model.wire import agent_message, client_message

    return [message_summary(client_message(m)) for m in pre.up[c]] + [
        message_summary(agent_message(m)) for m in pre.down[c]
    ]


@dataclass(frozen=True)
class _Event:
    kind: str  # "arrow" | "note"
    text: str
    src: int = -1  # lane index (arrows); the first lane (notes)
    dst: int = -1  # lane index (arrows); the last lane (notes)
    response: bool = False  # an arrow carrying a JSON-RPC response (dashed)
    style: str = "plain"  # notes: plain | fault | verdict | info


def _lanes(nclients: int) -> tuple[list[str], dict[int, int], int]:
    """(lane names, client -> lane index, the agent's lane index).

    The agent stands between the clients (half of them on each side), so an
    arrow between the agent and client 0 crosses no other client's lifeline
    when there are two clients (with three, one crossing is unavoidable).
    """
    left = max(1, (nclients + 1) // 2)
    order = [f"Client {c}" for c in range(left)] + ["Agent"] + [f"Client {c}" for c in range(left, nclients)]
    lane = {c: (c if c < left else c + 1) for c in range(nclients)}
    return order, lane, left


def _prompt(pre: System, idx: int) -> str:
    r = pre.agent.reqs[idx]
    return f"client {r.cid}'s session/prompt id={r.rid}"


#: What a step does, in the protocol's words (the note drawn for a step that sends no message).
def _words(pre: System, step) -> str:
    name, *args = step.action
    post = step.state
    if name == "AgentHold":
        return f"the agent holds {_prompt(pre, args[0])} (not inserted yet)"
    if name == "AgentReserveId":
        return f"the agent reserves msg_{post.agent.reqs[args[0]].mid} for {_prompt(pre, args[0])} (not inserted yet)"
    if name == "AgentInsert":
        how = "" if args[1] == "retained" else " (live-only: never replayed)"
        return f"the agent inserts {_prompt(pre, args[0])} into the conversation as msg_{post.agent.reqs[args[0]].mid}{how}"
    if name == "AgentRejectPrompt":
        return f"the agent rejects {_prompt(pre, args[0])}"
    if name == "AgentRespond":
        return f"the agent answers {_prompt(pre, args[0])}"
    if name == "AgentEcho":
        return f"the agent reports msg_{args[0]} ({'whole' if args[1] == 'whole' else 'by chunks'}); no client is attached"
    if name == "AgentBeginWork":
        return ("the agent starts foreground work on the inserted input" if args[0] == "input"
                else "the agent starts foreground work before insertion (a hook)")
    if name == "AgentInitiateWork":
        return "the agent starts foreground work of its own (no prompt)"
    if name == "AgentToolCall":
        return f"tool call {args[0]}: {args[1]}"
    if name == "AgentRequestPermission":
        if "withdrawn" in args:
            return f"the agent withdraws its permission request to client {args[0]} (the work was cancelled)"
        return f"the agent asks client {args[0]} for permission"
    if name == "AgentEndWork":
        return f"the agent ends the foreground work (stopReason {args[0]})"
    if name == "AgentFailWork":
        return ("the model provider fails: the work stops" if args[0] == "stops-work"
                else "aborting the cancelled work raises an error")
    if name == "AgentFailAndRetry":
        return "the model provider fails; the agent retries and the work goes on"
    if name == "AgentFailInBackground":
        return "background activity fails while the session is idle"
    if name == "AgentImportMessage":
        return f"the agent imports a message into the conversation (msg_{post.agent.conv[-1].mid})"
    if name == "ClientResume":
        return f"client {args[0]} reconnects ({'with' if args[1] == 'replay' else 'without'} replay)"
    if name in ("ClientCancelSession", "ClientCancelRequest", "ClientSubmitPrompt", "ClientRetryPrompt",
                "ClientAnswerPermission"):
        return f"client {args[0]}: {name[6:]}"
    return action_text(step.action)  # pragma: no cover - a new action kind: its name until it has words


#: Responses a client receives: drawn as a note over the client (the arrow was drawn when sent).
_RESPONSES = ("ok", "err", "resumed")


def _events(trace: Trace, note: str, violation: bool, notes: dict | None = None) -> tuple[list[str], list[_Event]]:
    """The lanes (clients and the agent) and the rows of a chart; ``notes``: step number -> a note
    drawn over the agent after that step's rows (what explains it: a hook, a queued insertion)."""
    nclients = len(trace[0][0].clients) if trace else 1
    lanes, lane, agent = _lanes(nclients)
    edge = (min(lane.values(), default=agent), max(lane.values(), default=agent))
    everyone = (min(edge[0], agent), max(edge[1], agent))
    rows: list[_Event] = []
    for n, (pre, step) in enumerate(trace, 1):
        name = step.action[0]
        msgs = step_messages(pre, step)
        if name == "ClientReceive":
            # the arrow was drawn when the message was sent; a response's arrival is
            # drawn too: it settles the submission (associated, or rejected and dropped)
            c, kind = step.action[1], step.action[2]
            if kind in _RESPONSES:
                got = [m for m in msgs if m[0].startswith("delivered")]
                what = message_summary(got[0][2]) if got else kind
                rows.append(_Event("note", f"{n}. client {c} receives {what}", lane[c], lane[c]))
            continue
        # A delivery hands over a message already drawn when it was sent
        # (``delivered->...``; older wire modules reported it as ``client->agent``).
        receipt = name in ("AgentReceive", "AgentResume")
        delivered = [m for m in msgs if m[0].startswith("delivered") or (receipt and m[0] == "client->agent")]
        msgs = [m for m in msgs if m not in delivered]
        if receipt:
            c = step.action[1]
            what = message_summary(delivered[0][2]) if delivered else "its message"
            rows.append(_Event("note", f"{n}. the agent receives {what} from client {c}", agent, agent))
        elif name == "ConnectionLost":
            c = step.action[1]
            lost = _in_transit(pre, c)
            text = f"{n}. client {c}'s connection is lost"
            if lost:
                text += "; dropped in transit: " + ", ".join(lost)
            rows.append(_Event("note", text, min(lane[c], agent), max(lane[c], agent), style="fault"))
        elif name == "AgentRestart":
            lost = [m for c in range(nclients) for m in _in_transit(pre, c)]
            text = f"{n}. the agent process restarts; every connection is lost"
            if lost:
                text += "; dropped in transit: " + ", ".join(lost)
            rows.append(_Event("note", text, *everyone, style="fault"))
        elif name.startswith("Agent") and (not msgs or name.startswith("AgentFail")):
            rows.append(_Event("note", f"{n}. {_words(pre, step)}", agent, agent,
                               style="fault" if name.startswith("AgentFail") else "plain"))
        elif not name.startswith("Agent") and not msgs:
            where = lane.get(step.action[1], agent) if len(step.action) > 1 and isinstance(step.action[1], int) else agent
            rows.append(_Event("note", f"{n}. {_words(pre, step)}", where, where))
        for direction, c, msg in msgs:
            src, dst = (agent, lane[c]) if direction == "agent->client" else (lane[c], agent)
            rows.append(_Event("arrow", f"{n}. {message_summary(msg)}", src, dst, response="method" not in msg))
        if notes and n in notes:
            rows.append(_Event("note", f"{n}. {notes[n]}", agent, agent, style="info"))
    if note:
        rows.append(_Event("note", note, *everyone, style="verdict" if violation else "info"))
    return lanes, rows


def _is_violation(note: str, violation: bool | None) -> bool:
    return ("violat" in note.lower()) if violation is None else violation


def _mm(text: str) -> str:
    """Text safe on one Mermaid line (``#`` and ``;`` as entity codes, newlines as <br/>)."""
    text = text.replace("#", "#35;").replace(";", "#59;")
    return "<br/>".join(text.splitlines())


def sequence_mermaid(trace: Trace, title: str = "", note: str = "", *, violation: bool | None = None,
                     notes: dict | None = None) -> str:
    """A Mermaid ``sequenceDiagram`` of a trace: one lane per client and one for the agent.

    Each JSON-RPC message is an arrow (dashed for responses), numbered by its
    step; steps without a message (an insertion, ...) are notes in the
    protocol's words over the agent; a client receiving a response is a note
    over that client; ``note`` (the violated property) is the final note, in a
    red box when ``violation`` (by default: when the note mentions a violation).
    """
    violation = _is_violation(note, violation)
    lanes, rows = _events(trace, note, violation, notes)
    alias = ["A" if lane == "Agent" else "C" + lane.split()[-1] for lane in lanes]
    out = []
    if title:
        out += ["---", f"title: {json.dumps(' '.join(title.split()))}", "---"]
    out.append("sequenceDiagram")
    for a, lane in zip(alias, lanes):
        out.append(f"    participant {a} as {lane}")
    for ev in rows:
        if ev.kind == "arrow":
            arrow = "-->>" if ev.response else "->>"
            out.append(f"    {alias[ev.src]}{arrow}{alias[ev.dst]}: {_mm(ev.text)}")
            continue
        over = alias[ev.src] if ev.src == ev.dst else f"{alias[ev.src]},{alias[ev.dst]}"
        line = f"    Note over {over}: {_mm(ev.text)}"
        if ev.style in ("verdict", "fault"):
            rgb = "rgb(253, 224, 224)" if ev.style == "verdict" else "rgb(255, 243, 205)"
            out += [f"    rect {rgb}", "    " + line, "    end"]
        else:
            out.append(line)
    return "\n".join(out) + "\n"


_NOTE_COLORS = {
    "plain": ("#fff8dc", "#b59a3a", "black"),
    "fault": ("#fff0c8", "#c07a00", "black"),
    "verdict": ("#fde0e0", "#c00000", "#800000"),
    "info": ("#e6f2e6", "#2e7d32", "#1b5e20"),
}


def _wrap(text: str, inches: float, size: float, weight: str = "normal") -> str:
    """Greedy word wrap by measured width (a word wider than the line stays whole)."""
    lines = []
    for part in text.split("\n"):
        line = ""
        for word in part.split(" "):
            trial = f"{line} {word}" if line else word
            if line and text_size(trial, size, weight)[0] > inches:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return "\n".join(lines)


def _lay_out(rows, lane_x: list[float], gap: float, pt: float) -> list[tuple]:
    """(event, wrapped text, x0, x1, height in inches) for each row of the chart, top to bottom:
    an arrow's label fits between its lanes, a note spans its lanes plus a margin."""
    line_h = pt * LINE_HEIGHT / 72
    laid = []
    for ev in rows:
        if ev.kind == "arrow":
            x0, x1 = lane_x[ev.src], lane_x[ev.dst]
            text = _wrap(ev.text, abs(x1 - x0) - 0.4, pt)
            h = text.count("\n") * line_h + line_h + 0.28
        else:
            x0, x1 = lane_x[ev.src] - gap * 0.45, lane_x[ev.dst] + gap * 0.45  # (src == dst: one lane)
            text = _wrap(ev.text, x1 - x0 - 0.35, pt, "bold" if ev.style == "verdict" else "normal")
            h = text.count("\n") * line_h + line_h + 0.34
        laid.append((ev, text, x0, x1, h))
    return laid


def draw_sequence(trace: Trace, path: str | Path, title: str = "", note: str = "", *,
                  violation: bool | None = None, notes: dict | None = None) -> Path:
    """Draw the chart of ``sequence_mermaid`` as PNG or SVG (by the suffix of ``path``)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    violation = _is_violation(note, violation)
    lanes, rows = _events(trace, note, violation, notes)
    pt = 9.5
    gap = 3.8 if len(lanes) <= 3 else 3.2
    margin = 1.9
    lane_x = [margin + i * gap for i in range(len(lanes))]
    width = lane_x[-1] + margin
    head_h = 0.42

    laid = _lay_out(rows, lane_x, gap, pt)
    title_text = _wrap(title, width - 0.6, 13, "bold") if title else ""
    title_h = (title_text.count("\n") + 1) * 13 * LINE_HEIGHT / 72 + 0.25 if title else 0.1
    top = title_h + 0.15
    body = sum(h for *_, h in laid) + 0.3
    height = top + head_h + body + head_h + 0.25
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    common = dict(family=FONT, parse_math=False, linespacing=LINE_HEIGHT)
    if title:
        ax.text(0.3, 0.15, title_text, fontsize=13, weight="bold", va="top", ha="left", **common)
    y_head, y_foot = top, top + head_h + body
    for x, lane in zip(lane_x, lanes):
        ax.plot([x, x], [y_head + head_h, y_foot], color="#888888", lw=1.0, ls=(0, (4, 3)), zorder=1)
        for y in (y_head, y_foot):
            bw = max(text_size(lane, 11, "bold")[0] + 0.4, 1.2)
            ax.add_patch(FancyBboxPatch((x - bw / 2, y), bw, head_h, boxstyle="round,pad=0,rounding_size=0.06",
                                        fc="#eef3fb", ec="#2b4a7a", lw=1.3, zorder=3))
            ax.text(x, y + head_h / 2, lane, fontsize=11, weight="bold", ha="center", va="center_baseline", zorder=4,
                    **common)
    y = y_head + head_h + 0.15
    for ev, text, x0, x1, h in laid:
        if ev.kind == "arrow":
            ya = y + h - 0.12
            col = "#1f4e99" if lanes[ev.dst] == "Agent" else "#2e7d32"  # to the agent: blue; to a client: green
            ax.add_patch(FancyArrowPatch((x0, ya), (x1, ya), arrowstyle="-|>,head_length=0.6,head_width=0.3",
                                         mutation_scale=12, color=col, lw=1.4, ls="--" if ev.response else "-",
                                         shrinkA=0, shrinkB=1, zorder=2))
            ax.text((x0 + x1) / 2, ya - 0.06, text, fontsize=pt, ha="center", va="bottom", zorder=4, **common)
        else:
            fc, ec, tc = _NOTE_COLORS[ev.style]
            ax.add_patch(FancyBboxPatch((x0, y + 0.06), x1 - x0, h - 0.12, boxstyle="round,pad=0,rounding_size=0.05",
                                        fc=fc, ec=ec, lw=1.6 if ev.style == "verdict" else 1.0, zorder=3))
            weight = "bold" if ev.style == "verdict" else "normal"
            ax.text((x0 + x1) / 2, y + h / 2, text, fontsize=pt, ha="center", va="center", color=tc, weight=weight,
                    zorder=4, **common)
        y += h
    return save_figure(fig, Path(path))


def write_sequence(trace: Trace, path: str | Path, title: str = "", note: str = "", *,
                   violation: bool | None = None, notes: dict | None = None) -> Path:
    """Write a trace's sequence chart: Mermaid text for ``.mmd``/``.md``, else a PNG/SVG drawing."""
    path = Path(path)
    if path.suffix.lower() in (".mmd", ".mermaid"):
        path.write_text(sequence_mermaid(trace, title, note, violation=violation, notes=notes))
        return path
    if path.suffix.lower() == ".md":
        path.write_text("```mermaid\n" + sequence_mermaid(trace, title, note, violation=violation, notes=notes) + "```\n")
        return path
    return draw_sequence(trace, path, title, note, violation=violation, notes=notes)



"""The run so far as a sequence chart: plain SVG, made here, drawn by the browser.

Lanes, left to right: each client and its connection (the channel where messages
wait until delivered), then the agent. One row per step: the step's number and
action on the left, then an arrow per JSON-RPC message (a client's message goes
into its channel, a delivery takes it to the agent; the agent's messages go to
the channel, or straight to the client when the configuration delivers at once),
or a mark on the acting lane for a step that sends nothing.
"""

from __future__ import annotations

from html import escape

__all__ = ["sequence_svg"]

LEFT = 290  # the column of step labels
LANE = 300  # from one client's lane to the next
ROW = 24
TOP = 40


def _lanes(clients: int) -> dict:
    x = {}
    pos = LEFT + 60
    for c in range(clients):
        x[("client", c)] = pos
        x[("channel", c)] = pos + LANE * 2 // 3
        pos += LANE
    x["agent"] = pos + 20
    return x


def _arrow(x1: int, x2: int, y: int, text: str, cls: str) -> str:
    mid = (x1 + x2) // 2
    return (f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" class="{cls}" marker-end="url(#head)"/>'
            f'<text x="{mid}" y="{y - 4}" text-anchor="middle" class="msg">{escape(text)}</text>')


def _hops(m: dict, x: dict, flush: bool) -> tuple[int, int, str]:
    c, d = m["client"], m["direction"]
    if d == "client->agent":
        return x[("client", c)], x[("channel", c)], "send"
    if d == "delivered->agent":
        return x[("channel", c)], x["agent"], "deliver"
    if d == "delivered->client":
        return x[("channel", c)], x[("client", c)], "deliver"
    return x["agent"], x[("client", c)] if flush else x[("channel", c)], "send"


def sequence_svg(clients: int, history: list[dict], flush: bool = False) -> str:
    """An SVG document for the steps of a run (``api.state_answer``'s ``history``)."""
    x = _lanes(clients)
    rows = sum(max(1, len(h["messages"])) for h in history)
    width = x["agent"] + 160
    height = TOP + ROW * (rows + 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" class="chart" role="img" aria-label="sequence chart of the run">',
           '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="7" refY="3" orient="auto" markerUnits="userSpaceOnUse">'
           '<path d="M0,0 L7,3 L0,6 z"/></marker></defs>']
    heads = [(("client", c), f"client {c}") for c in range(clients)]
    heads += [(("channel", c), f"connection {c}") for c in range(clients)] + [("agent", "agent")]
    for key, label in heads:
        cls = "lane chan" if isinstance(key, tuple) and key[0] == "channel" else "lane"
        out.append(f'<text x="{x[key]}" y="20" text-anchor="middle" class="head">{escape(label)}</text>')
        out.append(f'<line x1="{x[key]}" y1="28" x2="{x[key]}" y2="{height - 8}" class="{cls}"/>')
    y = TOP + ROW // 2
    for h in history:
        bad = " bad" if h["breaks"] else ""
        title = "; ".join(f["property"] for f in h["breaks"])
        label = f'{h["step"]}. {h["action"]}'
        out.append(f'<text x="8" y="{y + 4}" class="step{bad}" data-step="{h["step"]}">{escape(label)}'
                   + (f"<title>breaks {escape(title)}</title>" if title else "") + "</text>")
        if not h["messages"]:
            lane = x["agent"] if h["action"].startswith("Agent") else x.get(("client", _client_of(h["action"])), x["agent"])
            out.append(f'<rect x="{lane - 5}" y="{y - 5}" width="10" height="10" class="mark{bad}"/>')
            y += ROW
            continue
        for m in h["messages"]:
            x1, x2, cls = _hops(m, x, flush)
            out.append(_arrow(x1, x2, y + 4, m["summary"], cls + bad))
            y += ROW
    out.append("</svg>")
    return "".join(out)


def _client_of(action: str) -> int:
    """The client index of ``ClientX(c, ...)`` or ``ConnectionLost(c)`` (0 when none)."""
    inside = action[action.find("(") + 1 :].split(",")[0].rstrip(")")
    return int(inside) if inside.isdigit() else 0

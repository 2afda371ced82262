"""One ACP session of the live model agent: the model's state, stepped by what a real client sends.

The model has one session and one client per connection; the live agent runs one model per
``session/new`` with its one client, the connection on stdio. Each JSON-RPC message from the
client becomes the model client's step that sends it, then the agent's receipt of it; in between
the agent takes its own steps (``policy.Policy`` chooses). What the agent sends is the model's
messages rendered as JSON-RPC (``model_access.agent_message``), with the client's own request ids,
this session's id and the client's prompt content put back.

What the client sends is judged twice over. Every line goes to ``trace``'s rules as it is recorded
(``judge.WireJudge``: the same findings as ``trace`` on the record). And the model client's rules
judge what only the agent's clock can tell: before the model client sends what the real one sent,
it receives every message the agent wrote more than ``grace`` seconds earlier (and more, one by
one, only as far as the message needs); a message no correct client sends there is taken as sent
(``forced_client_step``), and the properties the step breaks are findings. A permission request the
client answers ``selected`` after it had the agent's ``$/cancel_request`` for it is the example
(on the wire alone the answer may have crossed the cancel).
"""

from __future__ import annotations

import json
import time

from acp_lifecycle.sims.explore import model_access as ma

__all__ = ["LiveSession"]


class LiveSession:
    def __init__(self, key: str, index: int, rules, budgets: dict, choose, grace: float, shoulds: bool = True):
        cfg = ma.agent_config(**budgets)
        self.model = ma.Model(cfg, rules, "agent", "agent", rules.name)
        self.state = self.model.initial()
        self.key, self.index = key, index
        self.choose = choose
        self.grace = grace
        self.real_of: dict[int, object] = {}  # model request id -> the client's JSON-RPC id
        self.rid_of: dict[str, int] = {}  # json.dumps(the client's id) -> model request id
        self.prompt_of: dict[int, list] = {}  # model request id -> the prompt's content blocks
        self.sent_at: list[float] = []  # when each message in the model's channel to the client was written
        self.findings: list[dict] = []
        self.notes: list[str] = []
        self.closed = False
        #: the client closed its side (end of stdin): the agent asks it nothing more
        self.alone = False
        #: the agent does what each SHOULD asks (False: a policy skips some on purpose)
        self.shoulds = shoulds
        self.steps = 0

    # --- stepping ---------------------------------------------------------------------------
    def _take(self, step) -> list[dict]:
        pre, self.state = self.state, step.state
        self.steps += 1
        out = []
        now = time.monotonic()
        for c, msg in step.emitted:
            if c == 0:
                self.sent_at.append(now)
                out += self.render(msg, pre)
        return out

    def _deliver_one(self) -> bool:
        step = ma.delivery_step(self.model.successors(self.state))
        if step is None:
            return False
        self.state = step.state
        self.sent_at.pop(0)
        return True

    def deliver_until(self, moment: float) -> None:
        while self.sent_at and self.sent_at[0] <= moment and self._deliver_one():
            pass

    def agent_steps(self) -> list:
        if self.closed:
            return []
        return ma.live_agent_steps(self.state, self.model.successors(self.state), self.alone, self.shoulds)

    def act(self) -> list[dict]:
        """Take one of the agent's own steps (the policy's choice); the JSON-RPC messages it sends."""
        steps = self.agent_steps()
        return self._take(self.choose(steps)) if steps else []

    # --- what the client sends ----------------------------------------------------------------
    def client_sends(self, msg: tuple, line: int, now: float) -> list[dict]:
        """The client sent ``msg`` (a model message): its step, judged, then the agent's receipt."""
        self.deliver_until(now - self.grace)
        while True:
            steps = self.model.successors(self.state)
            step = ma.client_step(self.state, steps, msg)
            if step is not None or not self._deliver_one():
                break
        if step is None:
            step = ma.forced_client_step(self.state, steps, msg)
            wire = ma.client_message(msg)
            if msg[0] == "perm_ans":
                wire["id"] = f"perm_{self.index}_{msg[1]}"
            self.notes.append(f"line {line}: no correct client sends {ma.summary(wire)} here")
        for f in self.model.step_findings(self.state, step):
            self.findings.append(dict(f, line=line))
        self.state = step.state
        receipts = ma.receipt_steps(self.model.successors(self.state))
        return self._take(self.choose(receipts))

    def prompt(self, real_id, blocks: list, line: int, now: float) -> list[dict]:
        text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        rid = ma.next_request_id(self.state)
        self.real_of[rid], self.rid_of[json.dumps(real_id)] = real_id, rid
        self.prompt_of[rid] = blocks
        return self.client_sends(("prompt", rid, "/c" if text.startswith("/") else "a"), line, now)

    def cancel_request(self, real_id, line: int, now: float) -> list[dict] | None:
        rid = self.rid_of.get(json.dumps(real_id))
        if rid is None:
            return None  # not a prompt of this session
        return self.client_sends(("cancel_req", rid), line, now)

    def resume(self, real_id, replay: bool, line: int, now: float) -> list[dict]:
        rid = ma.next_request_id(self.state)
        self.real_of[rid], self.rid_of[json.dumps(real_id)] = real_id, rid
        return self.client_sends(("resume", rid, replay), line, now)

    def close(self) -> list[dict]:
        """``session/close``: cancel the work and the prompts not yet inserted, answer every prompt,
        end the work (2.4.0: "the idle cancelled before the session/close response")."""
        out = []
        if ma.work_active(self.state) or ma.prompts_open(self.state):
            w = self.state.agent.work
            self.state = self.state._replace(up=((("cancel", w.serial if w else 0),),) + self.state.up[1:])
            out += self._take(self.choose(ma.receipt_steps(self.model.successors(self.state))))
        for _ in range(200):
            steps = [s for s in self.agent_steps() if _closing(s.action)]
            if not steps or not (ma.work_active(self.state) or ma.prompts_open(self.state) or _owed(self.state)):
                break
            out += self._take(min(steps, key=lambda s: _CLOSING.index(s.action[0])))
        self.closed = True
        return out

    # --- rendering ----------------------------------------------------------------------------
    def render(self, msg: tuple, pre) -> list[dict]:
        """A model message as the JSON-RPC the client gets (one message, or a chunk per content block)."""
        wire = ma.agent_message(msg)
        kind = msg[0]
        if kind in ("ok", "err", "resumed", "v1_prompt_result"):
            wire["id"] = self.real_of.get(msg[1], msg[1])
        if kind in ("perm", "perm_cancel"):
            pid = f"perm_{self.index}_{msg[1]}"
            if kind == "perm":
                wire["id"] = pid
            else:
                wire["params"]["requestId"] = pid
        params = wire.get("params")
        if isinstance(params, dict) and "sessionId" in params:
            params["sessionId"] = self.key
        if kind in ("user_message", "chunk"):
            blocks = self._content(msg[1], pre)
            update = params["update"]
            if kind == "user_message" and "content" in update and update["content"]:
                update["content"] = blocks
            elif kind == "chunk":
                out = []
                for b in blocks:
                    one = json.loads(json.dumps(wire))
                    one["params"]["update"]["content"] = b
                    out.append(one)
                return out
        return [wire]

    def _content(self, mid: int, pre) -> list:
        rid = ma.message_origin(self.state, mid) or ma.message_origin(pre, mid)
        return self.prompt_of.get(rid) or [{"type": "text", "text": "(a message the agent imported)"}]

    def permission_answer(self, pid: int, outcome: str, line: int, now: float) -> list[dict]:
        return self.client_sends(("perm_ans", pid, outcome), line, now)

    def cancel(self, line: int, now: float) -> list[dict]:
        return self.client_sends(("cancel", 0), line, now)

    def finish(self) -> None:
        """The connection ended: the client got everything. (What it still owed, a request it never
        answered, is a finding of the record's judge: ``judge.WireJudge``.)"""
        while self._deliver_one():
            pass


#: the steps that end things, in the order a closing agent takes them
_CLOSING = ("AgentRejectPrompt", "AgentRespond", "AgentEcho", "AgentToolCall", "AgentEndWork")


def _closing(action: tuple) -> bool:
    if action[0] == "AgentRejectPrompt":
        return action[2] == "cancelled"
    if action[0] == "AgentToolCall":
        return action[2] == "fail"
    if action[0] == "AgentEndWork":
        return action[1] == "cancelled"
    return action[0] in _CLOSING


def _owed(state) -> bool:
    return any(m.owed for m in state.agent.conv)

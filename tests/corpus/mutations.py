"""The violating corpus: each transcript is one deliberate mutation of a conforming one.

Every mutation breaks one rule and says, by construction, where the first
violation is: the line it wrote, moved or deleted next to, or the line of the
obligation it left open (a request never answered is reported at the request).
The expected line is computed here from the edit, never by running the checker.

``python tests/corpus/mutations.py`` rewrites ``tests/corpus/violating/`` (the
transcripts and ``manifest.json``) from ``tests/corpus/conforming/``; it needs
only the standard library. ``tests/corpus/regenerate.py`` runs it after the
node generator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
CONFORMING = HERE / "conforming"
VIOLATING = HERE / "violating"


class Transcript:
    """The lines of a transcript; untouched lines keep their exact bytes."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def entry(self, i: int) -> dict:
        return json.loads(self.lines[i])

    def msg(self, i: int) -> dict:
        return self.entry(i).get("msg", {})

    def find(self, pred: Callable[[dict], bool], start: int = 0, nth: int = 0) -> int:
        """0-based index of the ``nth`` line from ``start`` whose entry matches."""
        seen = 0
        for i in range(start, len(self.lines)):
            if pred(self.entry(i)):
                if seen == nth:
                    return i
                seen += 1
        raise LookupError("no such line")

    def set(self, i: int, entry: dict) -> None:
        self.lines[i] = _dumps(entry)

    def edit(self, i: int, change: Callable[[dict], None]) -> None:
        e = self.entry(i)
        change(e)
        self.set(i, e)

    def insert(self, i: int, entry: dict) -> None:
        self.lines.insert(i, _dumps(entry))

    def delete(self, i: int) -> None:
        del self.lines[i]

    def move(self, i: int, j: int) -> int:
        """Move line i so that it becomes line j (indices after the move); returns j."""
        line = self.lines.pop(i)
        self.lines.insert(j, line)
        return j

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def _dumps(entry: dict) -> str:
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False)


# --- predicates ------------------------------------------------------------------------


def update(kind: str | None = None, state: str | None = None, conn: str | None = None, **fields):
    def pred(e):
        m = e.get("msg", {})
        if m.get("method") != "session/update" or (conn and e.get("conn") != conn):
            return False
        u = m["params"]["update"]
        if kind and u.get("sessionUpdate") != kind:
            return False
        if state and u.get("state") != state:
            return False
        return all(u.get(k) == v for k, v in fields.items())

    return pred


def request(method: str, conn: str | None = None, text: str | None = None):
    def pred(e):
        m = e.get("msg", {})
        if m.get("method") != method or "id" not in m or (conn and e.get("conn") != conn):
            return False
        if text is not None:
            return any(b.get("text", "").startswith(text) for b in m["params"].get("prompt", []))
        return True

    return pred


def notification(method: str):
    return lambda e: e.get("msg", {}).get("method") == method and "id" not in e["msg"]


def response_to(t: Transcript, i: int):
    """The response to the request on line index i (same connection, other side, same id)."""
    req = t.entry(i)
    rid = json.dumps(req["msg"]["id"])
    return t.find(
        lambda e: e.get("conn") == req["conn"] and e.get("from") != req["from"] and "method" not in e.get("msg", {"method": 1})
        and json.dumps(e["msg"].get("id")) == rid,
        start=i + 1,
    )


def state_of(e):
    return e["msg"]["params"]["update"]


# --- the mutations ----------------------------------------------------------------------


@dataclass
class Mutation:
    name: str
    source: str
    rule: str
    description: str
    #: edits the transcript; returns the 1-based line of the expected first violation
    apply: Callable[[Transcript], int]
    rules: str = "rfd+2.4.0"
    needs_schema: bool = False


MUTATIONS: list[Mutation] = []


def mutation(name, source, rule, description, **kw):
    def register(fn):
        MUTATIONS.append(Mutation(name, source, rule, description, fn, **kw))
        return fn

    return register


@mutation("not-json", "basic", "wire_message_is_json", "the agent writes a truncated line (recorded raw)")
def _(t):
    i = t.find(update("agent_message_chunk"))
    t.set(i, {"conn": "c1", "from": "agent", "raw": t.lines[i][40:90]})
    return i + 1


@mutation("schema-content-not-array", "basic", "schema_valid",
          "user_message content is a string, not an array of blocks", needs_schema=True)
def _(t):
    i = t.find(update("user_message"))
    t.edit(i, lambda e: state_of(e).update(content="What is the capital of France?"))
    return i + 1


@mutation("request-id-null", "basic", "request_id_not_null", "the client sends session/prompt with id null")
def _(t):
    i = t.find(request("session/prompt"))
    j = response_to(t, i)
    t.edit(i, lambda e: e["msg"].update(id=None))
    t.edit(j, lambda e: e["msg"].update(id=None))
    return i + 1


@mutation("request-id-reused", "held-prompts", "request_id_not_reused",
          "the second held prompt reuses the id of the first, still pending")
def _(t):
    first = t.find(request("session/prompt", text="Held one"))
    second = t.find(request("session/prompt", text="Held two"))
    rid = t.msg(first)["id"]
    t.edit(second, lambda e: e["msg"].update(id=rid))
    return second + 1


@mutation("response-id-type", "ids-digits", "response_matches_a_request",
          'an extra response with the integer id 3 where the client sent the string "3"')
def _(t):
    i = t.find(request("session/prompt"))
    j = response_to(t, i)
    e = t.entry(j)
    e["msg"]["id"] = int(e["msg"]["id"])
    t.insert(j + 1, e)
    return j + 2


@mutation("response-id-float", "ids-huge", "response_matches_a_request",
          "an extra response whose huge integer id went through a double (1.152921504606849e+18)")
def _(t):
    i = t.find(request("session/prompt"))
    j = response_to(t, i)
    raw = t.lines[j]
    rid = str(t.msg(j)["id"])
    t.lines.insert(j + 1, raw.replace(f'"id":{rid}', f'"id":{float(rid)!r}', 1))
    return j + 2


@mutation("response-id-one-point-zero", "basic", "response_matches_a_request",
          "an extra response with id 2.0 to the request with id 2")
def _(t):
    i = t.find(request("session/prompt"))
    j = response_to(t, i)
    t.lines.insert(j + 1, t.lines[j].replace('"id":2,', '"id":2.0,', 1))
    return j + 2


@mutation("response-wrong-direction", "permission-allow", "one_response_per_request",
          "the agent sends a result with id 0, its own pending permission request's id: per direction it pairs "
          "with the client's initialize 0, already answered, not with the agent's own request")
def _(t):
    i = t.find(request("session/request_permission"))
    e = {"conn": "c1", "from": "agent", "msg": {"jsonrpc": "2.0", "id": t.msg(i)["id"], "result": {"outcome": {"outcome": "cancelled"}}}}
    t.insert(i + 1, e)
    return i + 2


@mutation("second-response", "long-conversation", "one_response_per_request",
          "a prompt in the middle of a long conversation is answered twice")
def _(t):
    i = t.find(request("session/prompt"), nth=20)
    j = response_to(t, i)
    t.lines.insert(j + 2, t.lines[j])
    return j + 3


@mutation("initialize-unanswered", "basic", "every_request_answered", "the initialize response is missing")
def _(t):
    i = t.find(request("initialize"))
    t.delete(response_to(t, i))
    return i + 1


@mutation("prompt-unanswered", "two-turns", "every_prompt_answered", "the second prompt is never answered")
def _(t):
    i = t.find(request("session/prompt"), nth=1)
    t.delete(response_to(t, i))
    return i + 1


@mutation("cancelled-request-unanswered", "held-prompt-cancel-request", "cancelled_request_still_answered",
          "a held prompt withdrawn with $/cancel_request never gets its -32800")
def _(t):
    i = t.find(request("session/prompt", text="Never mind"))
    t.delete(response_to(t, i))
    return i + 1


@mutation("update-for-unopened-session", "two-sessions", "updates_only_for_opened_sessions",
          "an agent_message_chunk names sess_9, which the connection never created")
def _(t):
    i = t.find(update("agent_message_chunk"), nth=2)
    t.edit(i, lambda e: e["msg"]["params"].update(sessionId="sess_9"))
    return i + 1


@mutation("update-on-wrong-connection", "long-multi-connection", "updates_only_for_opened_sessions",
          "an update for c2's session sent on c1, which never opened it")
def _(t):
    i = t.find(update("agent_message_chunk", conn="c2"), nth=3)
    t.edit(i, lambda e: e.update(conn="c1"))
    return i + 1


@mutation("update-after-close", "close-idle", "nothing_after_close",
          "an agent_message_chunk after the session/close response")
def _(t):
    i = t.find(request("session/close"))
    j = response_to(t, i)
    chunk = t.entry(t.find(update("agent_message_chunk")))
    t.insert(j + 1, chunk)
    return j + 2


@mutation("close-before-idle", "close-running", "close_ends_work_first",
          "the session/close response comes before the idle cancelled of the work it cancelled")
def _(t):
    close = t.find(request("session/close"))
    j = response_to(t, close)
    idle = t.find(update("state_update", state="idle"), start=close)
    t.move(j, idle)
    return idle + 1


@mutation("close-held-not-cancelled", "close-running", "close_answers_prompts_cancelled",
          "a held prompt cut by session/close is answered -32603 instead of -32800")
def _(t):
    i = t.find(request("session/prompt", text="Held"))
    j = response_to(t, i)
    t.edit(j, lambda e: e["msg"]["error"].update(code=-32603, message="Internal error"))
    return j + 1


@mutation("empty-prompt", "basic", "prompt_not_empty", "the client sends a prompt with no content blocks")
def _(t):
    i = t.find(request("session/prompt"))
    t.edit(i, lambda e: e["msg"]["params"].update(prompt=[]))
    return i + 1


@mutation("no-message-id", "local-command", "success_carries_message_id", "a prompt succeeds with result {}")
def _(t):
    i = t.find(request("session/prompt"), nth=1)
    j = response_to(t, i)
    t.edit(j, lambda e: e["msg"].update(result={}))
    return j + 1


@mutation("reused-message-id", "identical-prompts", "distinct_message_ids",
          "the second identical prompt is answered (and echoed) with the first one's messageId")
def _(t):
    i = t.find(request("session/prompt"), nth=1)
    j = response_to(t, i)
    t.edit(j, lambda e: e["msg"]["result"].update(messageId="msg_1"))
    echo = t.find(update("user_message", messageId="msg_2"))
    t.edit(echo, lambda e: state_of(e).update(messageId="msg_1"))
    return j + 1


@mutation("never-echoed", "basic", "every_inserted_message_echoed", "the user_message echo is missing")
def _(t):
    t.delete(t.find(update("user_message")))
    return t.find(lambda e: "result" in e.get("msg", {}) and "messageId" in e["msg"]["result"]) + 1


@mutation("echo-in-other-session", "two-sessions", "every_inserted_message_echoed",
          "the echo of session two's prompt is sent for session one (both have a msg_1)")
def _(t):
    i = t.find(request("session/prompt"), nth=1)
    j = response_to(t, i)
    echo = t.find(update("user_message"), start=i)
    t.edit(echo, lambda e: e["msg"]["params"].update(sessionId="sess_1"))
    return j + 1


@mutation("idle-without-running", "basic", "stop_reason_only_after_work",
          "the running state_update is missing: a new session reports a completion it never started")
def _(t):
    t.delete(t.find(update("state_update", state="running")))
    return t.find(update("state_update", state="idle")) + 1


@mutation("second-stop-reason", "background", "no_second_stop_reason",
          "the repeated idle snapshot after the background work says cancelled instead of end_turn")
def _(t):
    i = t.find(update("state_update", state="idle"), nth=1)
    t.edit(i, lambda e: state_of(e).update(stopReason="cancelled"))
    return i + 1


@mutation("error-beside-end-turn", "failure", "error_only_with_error_stop_reason",
          "the failure's idle says end_turn but keeps the error object")
def _(t):
    i = t.find(update("state_update", state="idle", stopReason="error"))
    t.edit(i, lambda e: state_of(e).update(stopReason="end_turn"))
    return i + 1


@mutation("unprefixed-stop-reason", "long-conversation", "custom_stop_reason_prefixed",
          "an idle deep in a long conversation says stopReason done (not listed, no _ prefix)")
def _(t):
    i = t.find(update("state_update", state="idle"), nth=25)
    t.edit(i, lambda e: state_of(e).update(stopReason="done"))
    return i + 1


@mutation("tool-update-after-idle", "permission-allow", "no_update_after_idle_of_its_work",
          "the tool call's completed update comes after the idle that ended its work")
def _(t):
    done = t.find(update("tool_call_update", status="completed"))
    idle = t.find(update("state_update", state="idle"))
    t.move(done, idle)
    return idle + 1


@mutation("tool-update-after-idle-outside-replay", "resume-replay-same-connection", "no_update_after_idle_of_its_work",
          "a replayed tool call of ended work moved after the resume response: live, after the idle of its work")
def _(t):
    resume = t.find(request("session/resume"))
    replayed = t.find(update("tool_call_update"), start=resume)
    answer = response_to(t, resume)
    return t.move(replayed, answer) + 1


@mutation("cancel-ends-end-turn", "cancel-running", "cancelled_work_ends_cancelled",
          "work cancelled by session/cancel ends idle end_turn")
def _(t):
    i = t.find(update("state_update", state="idle", stopReason="cancelled"))
    t.edit(i, lambda e: state_of(e).update(stopReason="end_turn"))
    return i + 1


@mutation("cancel-ends-error", "permission-cancel", "cancelled_work_ends_cancelled",
          "aborting the cancelled work raised: the idle says error instead of cancelled")
def _(t):
    i = t.find(update("state_update", state="idle", stopReason="cancelled"))
    t.edit(i, lambda e: state_of(e).update(stopReason="error", error={"code": -32603, "message": "aborted"}))
    return i + 1


@mutation("cancel-never-idle", "elicitation-cancelled", "cancelled_work_reported_idle",
          "the idle cancelled after session/cancel is missing")
def _(t):
    t.delete(t.find(update("state_update", state="idle", stopReason="cancelled")))
    return t.find(notification("session/cancel")) + 1


@mutation("proceeds-after-cancelled-permission", "permission-allow", "not_approved_not_proceeded",
          "the client answers the permission cancelled, and the tool call runs anyway")
def _(t):
    i = t.find(lambda e: e.get("from") == "client" and "outcome" in e.get("msg", {}).get("result", {}))
    t.edit(i, lambda e: e["msg"]["result"].update(outcome={"outcome": "cancelled"}))
    return t.find(update("tool_call_update", status="in_progress")) + 1


@mutation("proceeds-on-unknown-option", "ids-string", "not_approved_not_proceeded",
          "the client selects an option that was not offered, and the tool call runs")
def _(t):
    i = t.find(lambda e: e.get("from") == "client" and "outcome" in e.get("msg", {}).get("result", {}))
    t.edit(i, lambda e: e["msg"]["result"]["outcome"].update(optionId="allow_always"))
    return t.find(update("tool_call_update", status="in_progress")) + 1


@mutation("background-list-dropped", "background", "background_on_every_state_update",
          "the state_update that starts the next prompt's work omits the background list")
def _(t):
    i = t.find(update("state_update", state="running"), nth=1)
    t.edit(i, lambda e: state_of(e).pop("background"))
    return i + 1


@mutation("background-not-announced", "resume-background", "background_items_announced",
          "on resume, the snapshot lists a background tool call the new connection was never told about")
def _(t):
    i = t.find(update("tool_call_update", conn="c2"))
    t.delete(i)
    return t.find(update("state_update", conn="c2")) + 1


@mutation("background-removed-unfinished", "background", "background_final_before_removal",
          "the snapshot drops the background tool call before its completed update")
def _(t):
    done = t.find(update("tool_call_update", status="completed"))
    t.delete(done)
    return done + 1


@mutation("resume-without-snapshot", "resume-replay", "resume_snapshot_before_response",
          "the resume response comes without a state_update after the replay")
def _(t):
    i = t.find(update("state_update", conn="c2"))
    t.delete(i)
    return i + 1


@mutation("snapshot-before-replay", "resume-replay", "snapshot_after_replay",
          "the resume snapshot comes before the replayed messages")
def _(t):
    resume = t.find(request("session/resume"))
    snap = t.find(update("state_update", conn="c2"))
    t.move(snap, resume + 1)
    return resume + 3


@mutation("stale-resume-snapshot", "resume-while-running", "resume_snapshot_is_current",
          "the second connection's resume snapshot says requires_action while the first is told running, then idle")
def _(t):
    i = t.find(update("state_update", conn="c2"))
    t.edit(i, lambda e: state_of(e).update(state="requires_action"))
    return i + 1


@mutation("idle-resume-snapshot-while-running", "resume-while-running", "resume_snapshot_is_current",
          "the second connection's resume snapshot says idle while the first connection's work goes on: its tool call "
          "completes after the snapshot, then the work ends (issue 34: the first idle there agreed with the snapshot)")
def _(t):
    i = t.find(update("state_update", conn="c2"))
    t.edit(i, lambda e: state_of(e).update(state="idle"))
    return i + 1


@mutation("replay-without-replay-from", "resume-replay", "no_replay_without_replay_from",
          "the resume request has no replayFrom, and the agent replays anyway")
def _(t):
    i = t.find(request("session/resume"))
    t.edit(i, lambda e: e["msg"]["params"].pop("replayFrom"))
    return t.find(update("user_message", conn="c2")) + 1


@mutation("chunked-replay-without-reset", "resume-replay-chunked", "chunked_replay_resets_first",
          "replayed chunks of a streamed message without user_message content [] first")
def _(t):
    i = t.find(update("user_message", conn="c2", content=[]))
    t.delete(i)
    return i + 1


@mutation("bad-cursor-wrong-code", "resume-bad-cursor", "unsupported_replay_cursor_rejected",
          "a replay cursor of an unknown type (no _ prefix: no agent can support it) is answered -32603, not -32602")
def _(t):
    i = t.find(request("session/resume"))
    j = response_to(t, i)
    t.edit(i, lambda e: e["msg"]["params"].update(replayFrom={"type": "bookmark", "at": "msg_1"}))
    t.edit(j, lambda e: e["msg"]["error"].update(code=-32603, message="Internal error"))
    return j + 1


@mutation("tool-cancel-unconfirmed", "tool-cancel", "tool_cancel_confirmed",
          "an accepted tool_call/cancel is never confirmed by a final tool_call_update")
def _(t):
    i = t.find(request("tool_call/cancel"))
    j = response_to(t, i)
    t.delete(t.find(update("tool_call_update", status="cancelled")))
    return j + 1


@mutation("tool-cancel-not-advertised", "tool-cancel", "tool_cancel_only_if_advertised",
          "the client sends tool_call/cancel for a tool call that never advertised capabilities.cancel")
def _(t):
    i = t.find(update("tool_call_update", status="in_progress"))
    t.edit(i, lambda e: state_of(e).pop("capabilities"))
    return t.find(request("tool_call/cancel")) + 1


@mutation("tool-cancel-final-accepted", "tool-cancel", "tool_cancel_rejects_final",
          "a second tool_call/cancel of the already cancelled tool call is answered with success, not -32602")
def _(t):
    i = t.find(request("tool_call/cancel"), nth=1)
    j = response_to(t, i)
    t.edit(j, lambda e: (e["msg"].pop("error"), e["msg"].update(result={})))
    return j + 1


@mutation("cancelled-without-cancel", "basic", "cancelled_only_when_cancelled",
          "the work ends idle cancelled although nothing cancelled it (no session/cancel, close or $/cancel_request)")
def _(t):
    i = t.find(update("state_update", state="idle", stopReason="end_turn"))
    t.edit(i, lambda e: state_of(e).update(stopReason="cancelled"))
    return i + 1


@mutation("progress-without-running", "permission-allow", "requires_action_then_running",
          "after the permission is allowed the tool call goes in_progress with no running after requires_action")
def _(t):
    answer = t.find(lambda e: e.get("from") == "client" and "outcome" in e.get("msg", {}).get("result", {}))
    t.delete(t.find(update("state_update", state="running"), start=answer))
    return t.find(update("tool_call_update", status="in_progress")) + 1


@mutation("custom-state-only", "two-turns", "standard_states_reported",
          "the second turn's work is reported as _thinking, a custom state the client never advertised, instead of running")
def _(t):
    i = t.find(update("state_update", state="running"), nth=1)
    t.edit(i, lambda e: state_of(e).update(state="_thinking"))
    return i + 1


@mutation("replay-under-new-id", "resume-replay-same-connection", "replayed_ids_are_known",
          "the connection that saw msg_2 inserted resumes with replay, and msg_2 comes back as msg_9")
def _(t):
    resume = t.find(request("session/resume"))
    i = t.find(update("user_message", messageId="msg_2"), start=resume)
    t.edit(i, lambda e: state_of(e).update(messageId="msg_9"))
    return i + 1


def build() -> dict:
    """Write every violating transcript and the manifest; returns the manifest."""
    VIOLATING.mkdir(exist_ok=True)
    manifest = {}
    for m in MUTATIONS:
        t = Transcript((CONFORMING / f"{m.source}.jsonl").read_text(encoding="utf-8"))
        line = m.apply(t)
        (VIOLATING / f"{m.name}.jsonl").write_text(t.text(), encoding="utf-8")
        manifest[m.name] = {
            "source": m.source,
            "rule": m.rule,
            "line": line,
            "rules": m.rules,
            "needs_schema": m.needs_schema,
            "description": m.description,
        }
    names = {f"{m.name}.jsonl" for m in MUTATIONS}
    for stale in VIOLATING.glob("*.jsonl"):
        if stale.name not in names:
            stale.unlink()
    (VIOLATING / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


if __name__ == "__main__":
    print(f"{len(build())} violating transcripts written to {VIOLATING}")

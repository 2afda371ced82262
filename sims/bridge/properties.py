"""Bridge properties: plain functions over a run, each with its sentence; the seeded bridge bugs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from acp_lifecycle.sims.wire.transcript import V1_STOP_REASONS, check_transcript

from .core import (
    CANCELLED, EVIDENCE, INTERNAL_ERROR, Q_ADAPTER, Q_ANY_TIME, Q_CHUNKS, Q_NO_EARLY, Q_RESPONSE, Q_V1_CLOSED, Q_V1_END,
    Q_V1_TO_V2, Q_V1_UNCHANGED, Q_V2_TO_V1, V1_AGENT_FAULTS, V1_UPDATE_KINDS, WORKING, request_key, params_of,
)
from .run import BridgeRun
from .translate import say
from .view import message_of, compact


# ---------------------------------------------------------------------------
# Bridge properties: plain functions over a run, each with its sentence
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BridgeProperty:
    id: str
    to: str  # the output side the property is about
    title: str
    source: str
    quote: str
    check: Callable[[BridgeRun], list[str]]


def _id(k) -> str:
    """The JSON-RPC id of a (conn, id key) pair, for messages."""
    kind, value = k[1]
    return value if kind == "json" else json.dumps(value)


def _state_update(msg) -> dict | None:
    if msg is None or msg.get("method") != "session/update":
        return None
    u = params_of(msg).get("update")
    return u if isinstance(u, dict) and u.get("sessionUpdate") == "state_update" else None


def _prompt_exchanges(pairs) -> tuple[dict, dict]:
    """(prompts, responses) of ``(position, entry)`` pairs: (conn, id key) -> position / [position]."""
    prompts: dict = {}
    responses: dict = {}
    for pos, e in pairs:
        m = message_of(e)
        if m is None:
            continue
        k = (str(e.get("conn")), request_key(m.get("id")))
        if e.get("from") == "client" and m.get("method") == "session/prompt":
            prompts[k] = pos
        elif e.get("from") == "agent" and "method" not in m and k in prompts:
            responses.setdefault(k, []).append(pos)
    return prompts, responses


def _out_exchanges(run: BridgeRun):
    return run.cached("out", lambda: _prompt_exchanges(enumerate(run.entries)))


def _in_exchanges(run: BridgeRun):
    return run.cached("in", lambda: _prompt_exchanges(run.inp))


def _problem_lines(run: BridgeRun, kinds=None) -> set:
    return {p.line for p in run.problems if kinds is None or p.kind in kinds}


def _inputs(run: BridgeRun) -> dict:
    return run.cached("inputs", lambda: dict(run.inp))


def _caused(run: BridgeRun) -> dict:
    """input line -> [Out] it caused."""
    def make():
        d: dict = {}
        for o in run.out:
            d.setdefault(o.cause, []).append(o)
        return d
    return run.cached("caused", make)


# -- v2 agent -> v1 client ----------------------------------------------------


def _v1_answered_once(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    reported = _problem_lines(run)
    bad = []
    for k, pos in prompts.items():
        rs = responses.get(k, [])
        if len(rs) > 1:
            bad.append(f"v1 prompt {_id(k)} on {k[0]} got {len(rs)} responses")
        elif not rs and not run.partial and k in in_responses:
            line = run.out[pos].cause
            if line not in reported and not reported & set(in_responses[k]):
                bad.append(f"v1 prompt {_id(k)} on {k[0]} (line {line}) never got a response, and no problem says why")
    return bad


def _v1_never_error(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            m = run.out[pos].entry["msg"]
            if "result" in m:
                r = m["result"]
                if not isinstance(r, dict) or r.get("stopReason") not in V1_STOP_REASONS:
                    bad.append(f"v1 result for prompt {_id(k)} is {json.dumps(r)}: stopReason not one of v1's five")
                elif "messageId" in r:
                    bad.append(f"v1 result for prompt {_id(k)} carries messageId")
    return bad


def _expected_error(update: dict) -> dict:
    err = update.get("error")
    if isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str):
        return err
    return INTERNAL_ERROR


def _v1_error_idle(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            o = run.out[pos]
            u = _state_update(message_of(inputs.get(o.cause, {})))
            if u is None or u.get("state") != "idle" or u.get("stopReason") != "error":
                continue
            m = o.entry["msg"]
            want = _expected_error(u)
            if "error" not in m:
                bad.append(f"the error idle on line {o.cause} became {json.dumps(m.get('result'))} for prompt {_id(k)}, not an error response")
                continue
            got = m["error"]
            if got.get("code") != want["code"] or got.get("message") != want["message"] or (
                "data" in want and got.get("data") != want["data"]
            ):
                bad.append(f"the error idle on line {o.cause} carries {json.dumps(want)}; the v1 error response carries {json.dumps(got)}")
    return bad


def _v1_unchanged(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    reported = _problem_lines(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            o = run.out[pos]
            src = inputs.get(o.cause, {})
            m, sm = o.entry["msg"], message_of(src)
            u = _state_update(sm)
            if u is not None and u.get("state") == "idle":
                reason = u.get("stopReason")
                if reason == "error":
                    continue  # _v1_error_idle
                got = m.get("result", {}).get("stopReason") if isinstance(m.get("result"), dict) else None
                if reason in V1_STOP_REASONS and got != reason:
                    bad.append(f"the idle on line {o.cause} has stopReason {say(reason)}; the v1 result has {say(got)}")
                elif reason not in V1_STOP_REASONS and o.cause not in reported:
                    bad.append(f"the idle on line {o.cause} has stopReason {say(reason)}, which v1 lacks, and no problem was reported")
            elif sm is not None and src.get("from") == "agent" and "method" not in sm and (str(src.get("conn")), request_key(sm.get("id"))) == k:
                if m != sm:
                    bad.append(f"the v2 error response on line {o.cause} reached v1 changed: {json.dumps(m)}")
            else:
                bad.append(f"the v1 response to prompt {_id(k)} has no idle or error response as its cause (line {o.cause})")
    return bad


def _pending_before(run: BridgeRun) -> dict:
    """input line -> {conn: number of v1 prompts open on the output side just before it}."""
    opened: dict = {}
    answered = set()
    out, i, result = run.out, 0, {}
    prompts, _ = _out_exchanges(run)
    positions = {pos: k for k, pos in prompts.items()}
    for n, _ in run.inp:
        while i < len(out) and out[i].at < n:
            e, m = out[i].entry, message_of(out[i].entry)
            if i in positions:
                opened[positions[i]] = True
            elif m is not None and e.get("from") == "agent" and "method" not in m:
                k = (str(e.get("conn")), request_key(m.get("id")))
                if k in opened:
                    answered.add(k)
            i += 1
        counts: dict = {}
        for k in opened:
            if k not in answered:
                counts[k[0]] = counts.get(k[0], 0) + 1
        result[n] = counts
    return result


def _v1_nothing_lost(run: BridgeRun) -> list[str]:
    causes = {o.cause for o in run.out}
    reported = _problem_lines(run)
    absorbed = set(run.absorbed)
    pending = _pending_before(run)
    in_prompts, _ = _in_exchanges(run)
    last_state: dict = {}
    bad = []
    for n, e in run.inp:
        m = message_of(e)
        conn = str(e.get("conn"))
        u = _state_update(m) if e.get("from") == "agent" else None
        before = last_state.get(conn, "idle")
        if u is not None:
            last_state[conn] = u.get("state")
        if n in causes or n in reported or n in absorbed:
            continue
        if m is not None and e.get("from") == "agent" and "method" not in m and "result" in m and (conn, request_key(m.get("id"))) in in_prompts:
            continue  # the {messageId} result: v1 has no field for it; the association is kept
        if u is not None and (u.get("state") in WORKING or before == "idle") and pending[n].get(conn):
            continue  # running while a v1 prompt is open, or a repeated idle snapshot
        bad.append(f"line {n} ({compact([e])[0]}) reached the v1 side neither as a message nor as a reported problem")
    return bad


def _v1_speaks_v1(run: BridgeRun) -> list[str]:
    bad = []
    for pos, o in enumerate(run.out):
        m = message_of(o.entry)
        if m is None:
            continue
        if m.get("method") == "session/update":
            kind = params_of(m).get("update", {}).get("sessionUpdate")
            if kind not in V1_UPDATE_KINDS:
                bad.append(f"output {pos + 1}: a {kind} update, which v1 does not have")
        if m.get("method") == "session/resume" and params_of(m).get("replayFrom"):
            bad.append(f"output {pos + 1}: session/resume with replayFrom, which v1 does not have")
    return bad


# -- v1 agent -> v2 clients ----------------------------------------------------


def _v2_rules(run: BridgeRun) -> list[str]:
    findings = check_transcript(list(enumerate(run.entries, 1)), partial=run.partial)
    inherited = _problem_lines(run, V1_AGENT_FAULTS)
    bad = []
    for f in findings:
        if f.severity != "violation":
            continue
        cause = run.out[f.line - 1].cause if 0 < f.line <= len(run.out) else 0
        if cause in inherited:
            continue  # the v1 agent broke v1 there, and the bridge reported it
        bad.append(f"output {f.line} (from input line {cause}): {f.property}: {f.message}")
    return bad


def _v2_insertion_point(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    immediate = run.options.get("insertion", "echo") == "immediate"
    bad = []
    for k, rs in responses.items():
        req = run.out[prompts[k]].cause
        for pos in rs:
            o = run.out[pos]
            if "result" not in o.entry["msg"]:
                continue
            src = inputs.get(o.cause, {})
            sm = message_of(src) or {}
            if immediate:
                ok = o.cause == req
            else:
                # Evidence the agent took the prompt: its echo or other output of the turn
                # (EVIDENCE), a permission request of the prompt's session, or its response.
                sid = params_of(message_of(run.out[prompts[k]].entry) or {}).get("sessionId")
                method = sm.get("method")
                evidence = params_of(sm).get("sessionId") == sid and (
                    method == "session/update" and params_of(sm).get("update", {}).get("sessionUpdate") in EVIDENCE
                    or method == "session/request_permission")
                own = src.get("from") == "agent" and "method" not in sm and (str(src.get("conn")), request_key(sm.get("id"))) == k
                ok = src.get("from") == "agent" and (evidence or own) and o.cause > req
            if not ok or o.at < o.cause:
                bad.append(
                    f"the v2 success response to prompt {_id(k)} (line {req}) was sent at input line {o.at}, "
                    f"before the bridge's insertion point ({run.options.get('insertion', 'echo')})"
                )
    return bad


def _v2_error_after_insertion(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    inputs = _inputs(run)
    continuing = _problem_lines(run, {"failure-while-work-continues"})
    after_cancel = _problem_lines(run, {"v1-cancel-not-cancelled"})
    bad = []
    for k, lines in in_responses.items():
        for n in lines:
            m = inputs[n]["msg"]
            if "error" not in m:
                continue
            outs = [run.out[p] for p in responses.get(k, [])]
            inserted = any("result" in o.entry["msg"] and o.at < n for o in outs)
            caused = _caused(run).get(n, [])
            if inserted:
                if any("error" in o.entry["msg"] for o in outs):
                    bad.append(f"the v1 error on line {n} came after the bridge reported insertion, yet became an error response")
                idles = [u for u in (_state_update(message_of(o.entry)) for o in caused) if u and u.get("state") == "idle"]
                if not idles and n not in continuing:
                    bad.append(f"the v1 error on line {n} after insertion ended no foreground work with an idle")
                cancelled = m["error"].get("code") == CANCELLED or (
                    n in after_cancel and idles and idles[0].get("stopReason") == "cancelled")
                for u in idles:
                    if cancelled:
                        if u.get("stopReason") != "cancelled" or "error" in u:
                            bad.append(f"the v1 -32800 on line {n} after insertion became {json.dumps(u)}, not an idle cancelled")
                    elif u.get("stopReason") != "error" or u.get("error") != m["error"]:
                        bad.append(
                            f"the v1 error on line {n} ({json.dumps(m['error'])}) after insertion became idle "
                            f"stopReason={say(u.get('stopReason'))} error={json.dumps(u.get('error'))}"
                        )
            elif not any(o.entry["msg"] == m for o in caused):
                bad.append(f"the v1 error on line {n} before insertion was not forwarded as the v2 error response")
    return bad


def _v2_stop_reason(run: BridgeRun) -> list[str]:
    _, in_responses = _in_exchanges(run)
    inputs = _inputs(run)
    bad = []
    for k, lines in in_responses.items():
        for n in lines:
            m = inputs[n]["msg"]
            if "result" not in m:
                continue
            reason = m["result"].get("stopReason") if isinstance(m["result"], dict) else None
            idles = [u for u in (_state_update(message_of(o.entry)) for o in _caused(run).get(n, [])) if u and u.get("state") == "idle"]
            for u in idles:
                if u.get("stopReason") != reason:
                    bad.append(f"the v1 result on line {n} (stopReason {say(reason)}) became an idle with {say(u.get('stopReason'))}")
            if not idles and not run.partial and not any(
                o.cause > n and (_state_update(message_of(o.entry)) or {}).get("state") == "idle" for o in run.out
            ):
                bad.append(f"the v1 result on line {n} (stopReason {say(reason)}) never became an idle")
    return bad


def _v2_nothing_lost(run: BridgeRun) -> list[str]:
    causes = {o.cause for o in run.out}
    reported = _problem_lines(run)
    absorbed = set(run.absorbed)
    _, in_responses = _in_exchanges(run)
    answers = {n for lines in in_responses.values() for n in lines}
    bad = []
    for n, e in run.inp:
        if n in causes or n in reported or n in absorbed or n in answers:
            continue  # (a v1 answer's outcome is checked by the two properties above)
        bad.append(f"line {n} ({compact([e])[0]}) reached the v2 side neither as a message nor as a reported problem")
    return bad


def _v2_answered_once(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    bad = []
    for k, pos in prompts.items():
        rs = responses.get(k, [])
        if len(rs) > 1:
            bad.append(f"v2 prompt {_id(k)} on {k[0]} got {len(rs)} responses")
        elif not rs and not run.partial and k in in_responses:
            bad.append(f"v2 prompt {_id(k)} on {k[0]} never got a response though the v1 agent answered it")
    return bad


PROPERTIES: tuple[BridgeProperty, ...] = (
    BridgeProperty("v1-prompt-answered-once", "v1", "every held v1 prompt gets exactly one response",
                   "RFD + v1 prompt turn", Q_V2_TO_V1 + " / v1: " + Q_V1_END, _v1_answered_once),
    BridgeProperty("v1-stop-reason-never-error", "v1", "a v1 result never carries \"error\" (or any non-v1 value) as stopReason",
                   "RFD; DeepSeek-Reasonix#8241", Q_V1_UNCHANGED + " / " + Q_V1_CLOSED, _v1_never_error),
    BridgeProperty("v1-error-idle-becomes-error-response", "v1",
                   "an error idle becomes a JSON-RPC error with its code and message (-32603 when absent)",
                   "RFD, Report failures after insertion", Q_V2_TO_V1, _v1_error_idle),
    BridgeProperty("v1-stop-reasons-pass-unchanged", "v1", "the five v1 stop reasons pass unchanged; error responses pass as they are",
                   "RFD", Q_V1_UNCHANGED, _v1_unchanged),
    BridgeProperty("v1-nothing-representable-lost", "v1", "every input line reaches the v1 side or is reported",
                   "Message Updates RFD (acp-notes 1.5)", Q_CHUNKS, _v1_nothing_lost),
    BridgeProperty("v1-output-speaks-v1", "v1", "the v1 side sees only v1 updates and methods",
                   "RFD", Q_V1_UNCHANGED, _v1_speaks_v1),
    BridgeProperty("v2-rules-hold", "v2", "the bridged transcript passes every v2 rule of `acp-lifecycle trace`",
                   "RFD", "(every property of sims.wire.transcript.check_transcript)", _v2_rules),
    BridgeProperty("v2-response-at-insertion-point", "v2",
                   "the v2 success response never precedes the bridge's insertion point (the first evidence the agent took the prompt)",
                   "RFD, Correlate prompts with accepted user messages", Q_ADAPTER + " / " + Q_NO_EARLY, _v2_insertion_point),
    BridgeProperty("v2-error-after-insertion-becomes-error-idle", "v2",
                   "a v1 error after insertion becomes an idle error with the same error object; before it, the v2 error response",
                   "RFD, Report failures after insertion", Q_V1_TO_V2, _v2_error_after_insertion),
    BridgeProperty("v2-stop-reason-becomes-idle", "v2", "the v1 response's stopReason becomes the idle's stopReason",
                   "RFD, Report failures after insertion", Q_RESPONSE, _v2_stop_reason),
    BridgeProperty("v2-nothing-representable-lost", "v2", "every input line reaches the v2 side or is reported",
                   "RFD", Q_ANY_TIME, _v2_nothing_lost),
    BridgeProperty("v2-prompt-answered-once", "v2", "every v2 prompt the v1 agent answered gets exactly one response",
                   "RFD, Change the session/prompt response",
                   "The agent MUST respond successfully once the user message has been inserted, without waiting for "
                   "foreground processing to finish.", _v2_answered_once),
)
BY_ID = {p.id: p for p in PROPERTIES}


def check_properties(run: BridgeRun) -> dict[str, list[str]]:
    """Property id -> violations (empty when it holds), for the properties of the run's output side."""
    return {p.id: p.check(run) for p in PROPERTIES if p.to == run.to}


#: Seeded bridge bugs: name -> (output side, the property that catches it, what it is)
BRIDGE_BUGS: dict[str, tuple[str, str, str]] = {
    "v1-error-stop-reason": (
        "v1", "v1-stop-reason-never-error",
        "the error idle becomes a v1 result with stopReason \"error\" (DeepSeek-Reasonix#8241)",
    ),
    "v1-drop-error-code": (
        "v1", "v1-error-idle-becomes-error-response",
        "the error idle becomes a v1 error response with -32603, dropping the agent's code and message",
    ),
    "v2-idle-drop-error": (
        "v2", "v2-error-after-insertion-becomes-error-idle",
        "a v1 error after insertion becomes an idle error without the error object",
    ),
    "v2-answer-before-insertion": (
        "v2", "v2-response-at-insertion-point",
        "the v2 prompt is answered with a messageId at receipt, before any evidence of insertion",
    ),
}

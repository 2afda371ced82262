"""The scenarios: the RFD's implementation checklist, in its order, then the races and
failure cases of its "Report failures after insertion" section (``SCENARIOS``)."""

from __future__ import annotations

from typing import Callable

from acp_lifecycle.model import RFD_RULES, S240_RULES, VOCAB, Config, Lifecycle, Rules, System

from .core import (
    BEGIN,
    END,
    Scenario,
    ScenarioError,
    ScenarioRun,
    Trace,
    agent_gets,
    client_gets,
    conversation_message,
    echo,
    expect_acknowledged,
    expect_shown_once,
    idle_updates_sent,
    insert,
    play,
    require,
    respond,
    resume,
    scenario_config,
    sent_messages,
    step_number,
    submission_of,
    submit,
    view_entries,
)

#: the model under the RFD, for its properties (the scenarios' are the core's)
_CORE = Lifecycle(Config(name="scenarios"))

__all__ = ["SCENARIOS", "run"]

#: the model's vocabulary the expectations are written in
IDLE, RUNNING, ERR_CANCELLED, ERR_FAILURE = VOCAB.IDLE, VOCAB.RUNNING, VOCAB.ERR_CANCELLED, VOCAB.ERR_FAILURE

# ---------------------------------------------------------------------------
# The scenarios, in the order of the RFD's implementation checklist
# ---------------------------------------------------------------------------

_SCENARIOS: list[Scenario] = []


def _scenario(name: str, title: str, rfd: str, config: Config, steps, rules: Rules = RFD_RULES):
    def register(expect: Callable) -> Callable:
        _SCENARIOS.append(Scenario(name, title, rfd, config, rules, tuple(steps), expect))
        return expect

    return register


# 1 ---------------------------------------------------------------------------

_RESERVED = scenario_config("reserved-id-no-early-success", reserve=True)


@_scenario(
    "reserved-id-no-early-success",
    "An ID reserved before insertion gives no early success; the response after insertion carries it",
    "Exercise an ID assigned before insertion without an early successful response",
    _RESERVED,
    [
        submit(0), agent_gets(0), ("AgentReserveId", 0),
        insert(0), respond(0), echo(1),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        BEGIN, client_gets(0, "state"), END, client_gets(0, "state"),
    ],
)
def _reserved(final: System, trace: Trace) -> None:
    """No success response was possible while the ID was only reserved; after insertion the response carries the reserved ID."""
    n_res, n_ins = step_number(trace, ("AgentReserveId", 0)), step_number(trace, insert(0))
    reserved = trace[n_res - 1][1].state.agent.reqs[0].mid
    require(reserved, "AgentReserveId should assign an ID to the request")
    for n in range(n_res, n_ins):
        pre = trace[n][0]
        require(pre.agent.reqs[0].phase == "reserved", f"before step {n + 1} the request should be reserved, not inserted")
        offered = [st.action for st in Lifecycle(_RESERVED, RFD_RULES).next_steps(pre) if st.action[0] == "AgentRespond"]
        require(not offered, f"before insertion the model offered {offered}: a success response with a reserved ID")
    early = [n for n, _, m in sent_messages(trace, "ok") if n < n_ins]
    require(not early, f"a success response was sent at step {early} before the insertion at step {n_ins}")
    r = final.agent.reqs[0]
    require(r.answers == (("ok", reserved),), f"the prompt should be answered once with message {reserved}, got {r.answers}")
    expect_acknowledged(final, 0, 1, reserved)
    expect_shown_once(final, 0, reserved, ("a",))


# 2 ---------------------------------------------------------------------------


@_scenario(
    "echo-before-response",
    "The user_message arrives before the response; the client reconciles them into one message",
    "The response and the user-message update describe the same insertion, but clients MUST tolerate "
    "those updates arriving before or after the response.",
    scenario_config("echo-before-response"),
    [submit(0), agent_gets(0), insert(0), echo(1), respond(0), client_gets(0, "user_message"), client_gets(0, "ok")],
)
def _echo_before(final: System, trace: Trace) -> None:
    """The client held its optimistic copy and the echo side by side, then the response merged them into one entry for message 1."""
    before = trace[step_number(trace, client_gets(0, "ok")) - 1][0]
    require(
        before.clients[0].view == ((-1, ("a",), True), (1, ("a",), False)),
        f"before the response the client should hold its optimistic copy and the echo, it holds {before.clients[0].view}",
    )
    expect_acknowledged(final, 0, 1, 1)
    require(final.clients[0].view == ((1, ("a",), False),), f"the client should show one message, it shows {final.clients[0].view}")


@_scenario(
    "echo-after-response",
    "The response arrives before the user_message; the client's optimistic copy becomes the message",
    "If the notification arrives first, the response later establishes that association.",
    scenario_config("echo-after-response"),
    [submit(0), agent_gets(0), insert(0), respond(0), echo(1), client_gets(0, "ok"), client_gets(0, "user_message")],
)
def _echo_after(final: System, trace: Trace) -> None:
    """The response turned the optimistic copy into message 1; the echo then replaced its content, still one entry."""
    after_ok = trace[step_number(trace, client_gets(0, "ok")) - 1][1].state
    require(
        after_ok.clients[0].view == ((1, ("a",), True),),
        f"after the response the optimistic copy should stand for message 1, the view is {after_ok.clients[0].view}",
    )
    expect_acknowledged(final, 0, 1, 1)
    require(final.clients[0].view == ((1, ("a",), False),), f"the client should show one message, it shows {final.clients[0].view}")


# 3 ---------------------------------------------------------------------------


@_scenario(
    "identical-prompts-distinct-ids",
    "Two clients submit identical prompts; distinct IDs, each client associates its own",
    "The agent MUST assign a distinct messageId to each accepted submission, even when its content is "
    "identical to another submission.",
    scenario_config("identical-prompts-distinct-ids", clients=2),
    [
        submit(0), submit(1), agent_gets(1), agent_gets(0),
        insert(0), insert(1), echo(1), echo(2), respond(1), respond(0),
        client_gets(0, "user_message"), client_gets(0, "user_message"), client_gets(0, "ok"),
        client_gets(1, "user_message"), client_gets(1, "user_message"), client_gets(1, "ok"),
    ],
)
def _identical(final: System, trace: Trace) -> None:
    """Client 1's prompt (received first) is message 1, client 0's is message 2; each client associates its own and shows both once."""
    mids = [m.mid for m in final.agent.conv]
    require(mids == [1, 2], f"the two identical prompts should be messages 1 and 2, the conversation has {mids}")
    require(final.agent.conv[0].content == final.agent.conv[1].content == "a", "both messages should have content a")
    expect_acknowledged(final, 1, 1, 1)
    expect_acknowledged(final, 0, 1, 2)
    for c in (0, 1):
        expect_shown_once(final, c, 1, ("a",))
        expect_shown_once(final, c, 2, ("a",))


# 4 ---------------------------------------------------------------------------


@_scenario(
    "two-clients-one-session",
    "Submissions from two clients; each client sees both messages, and only the submitter has the association",
    "Other clients identify the message by messageId without needing the original request.",
    scenario_config("two-clients-one-session", clients=2, alphabet=("a", "b"), chunks=True),
    [
        submit(0, "a"), agent_gets(0), insert(0), respond(0), echo(1, "whole"),
        BEGIN,
        submit(1, "b"), agent_gets(1), insert(1), echo(2, "chunk"), respond(1),
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"), client_gets(0, "chunk"),
        client_gets(1, "user_message"), client_gets(1, "state"), client_gets(1, "chunk"), client_gets(1, "ok"),
        END, client_gets(0, "state"), client_gets(1, "state"),
    ],
)
def _two_clients(final: System, trace: Trace) -> None:
    """Both clients show message 1 (a) and message 2 (b) once; client 0 owns message 1, client 1 owns message 2."""
    expect_acknowledged(final, 0, 1, 1)
    expect_acknowledged(final, 1, 1, 2)
    for c in (0, 1):
        expect_shown_once(final, c, 1, ("a",))
        expect_shown_once(final, c, 2, ("b",))
        require(len(final.clients[c].subs) == 1, f"client {c} should have exactly its own one submission")
    require(final.agent.work is None and final.agent.stop == "end_turn", "the work that took both messages should have ended")


# 5 ---------------------------------------------------------------------------


@_scenario(
    "retained-association-across-replay",
    "A retained message replays under its returned ID after a reconnect and after an agent restart",
    "If an agent retains and replays that same message within the session, it MUST reuse the returned "
    "messageId, including after reconnecting or restarting.",
    scenario_config("retained-association-across-replay", prompts=2, losses=1, resumes=2, restarts=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        ("ConnectionLost", 0), ("ClientResume", 0, "replay"), resume(0, "whole"),
        client_gets(0, "user_message"), client_gets(0, "resumed"),
        ("AgentRestart",), ("ClientResume", 0, "replay"), resume(0, "whole"),
        client_gets(0, "user_message"), client_gets(0, "resumed"),
        submit(0, "a"), agent_gets(0), insert(1), respond(1), echo(2),
        client_gets(0, "ok"), client_gets(0, "user_message"),
    ],
)
def _across_replay(final: System, trace: Trace) -> None:
    """Both replays sent message 1 under ID 1; the client keeps its association and one copy; after the restart a new prompt gets ID 2."""
    replayed = [(n, m[1]) for n, _, m in sent_messages(trace, "user_message") if m[3]]
    require(len(replayed) == 2 and all(mid == 1 for _, mid in replayed),
           f"two replays should each send message 1, they sent {replayed}")
    restart = step_number(trace, ("AgentRestart",))
    require(replayed[0][0] < restart < replayed[1][0], "one replay should come before the restart and one after")
    expect_acknowledged(final, 0, 1, 1)
    expect_shown_once(final, 0, 1, ("a",))
    expect_acknowledged(final, 0, 4, 2)
    expect_shown_once(final, 0, 2, ("a",))


# 6 ---------------------------------------------------------------------------


@_scenario(
    "imported-message",
    "An imported message has an agent-generated ID and no prompt response; every client renders it",
    "Imported or non-ACP messages continue to use agent-generated message IDs without a corresponding "
    "prompt response.",
    scenario_config("imported-message", clients=2, prompts=0, imports=1),
    [("AgentImportMessage",), echo(1), client_gets(0, "user_message"), client_gets(1, "user_message")],
)
def _imported(final: System, trace: Trace) -> None:
    """Message 1 is imported (no request, no response) and both clients show it."""
    m = conversation_message(final, 1)
    require(m.kind == "import" and m.origin == -1, f"message 1 should be imported, it is {m.kind}")
    require(not final.agent.reqs, "no session/prompt should exist")
    require(not sent_messages(trace, "ok") and not sent_messages(trace, "err"), "no prompt response should be sent")
    for c in (0, 1):
        expect_shown_once(final, c, 1, ("i",))
        require(not final.clients[c].subs, f"client {c} should have no submission to associate")


# 7 ---------------------------------------------------------------------------


@_scenario(
    "full-and-streamed-echo",
    "One prompt is reported whole (user_message), the next streamed (user_message_chunk)",
    "The agent MUST report each inserted user message through user_message or user_message_chunk "
    "updates, using the same messageId.",
    scenario_config("full-and-streamed-echo", prompts=2, alphabet=("a", "b"), chunks=True),
    [
        submit(0, "a"), agent_gets(0), insert(0), respond(0), echo(1, "whole"),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        submit(0, "b"), agent_gets(0), insert(1), echo(2, "chunk"), respond(1),
        client_gets(0, "chunk"), client_gets(0, "ok"),
    ],
)
def _full_and_streamed(final: System, trace: Trace) -> None:
    """Message 1 arrived as a user_message, message 2 as a user_message_chunk; the client shows each once, associated to its prompt."""
    whole = [m[1] for _, _, m in sent_messages(trace, "user_message")]
    chunks = [m[1] for _, _, m in sent_messages(trace, "chunk")]
    require(whole == [1] and chunks == [2], f"expected message 1 whole and message 2 by chunk, got {whole} and {chunks}")
    expect_acknowledged(final, 0, 1, 1)
    expect_acknowledged(final, 0, 2, 2)
    expect_shown_once(final, 0, 1, ("a",))
    expect_shown_once(final, 0, 2, ("b",))


# 8 ---------------------------------------------------------------------------


@_scenario(
    "live-only-command",
    "A locally handled command is inserted live-only: answered and reported live, absent from later replay",
    "Include a locally handled command reported live but omitted from later replay",
    scenario_config("live-only-command", prompts=2, alphabet=("a", "/c"), losses=1, resumes=1),
    [
        submit(0, "a"), agent_gets(0), insert(0), respond(0), echo(1),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        submit(0, "/c"), agent_gets(0), insert(1, "live-only"), respond(1), echo(2),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        ("ConnectionLost", 0), ("ClientResume", 0, "replay"), resume(0, "whole"),
        client_gets(0, "user_message"), client_gets(0, "resumed"),
    ],
)
def _live_only_command(final: System, trace: Trace) -> None:
    """The command (message 2) was answered and echoed live; the replay sent message 1 only; the client keeps both."""
    cmd = conversation_message(final, 2)
    require(cmd.kind == "command" and not cmd.retained, "message 2 should be a live-only command")
    live = [m[1] for _, _, m in sent_messages(trace, "user_message") if not m[3]]
    replay = [m[1] for _, _, m in sent_messages(trace, "user_message") if m[3]]
    require(2 in live, "the command should be reported live")
    require(replay == [1], f"the replay should hold message 1 only, it held {replay}")
    expect_acknowledged(final, 0, 2, 2)
    expect_shown_once(final, 0, 1, ("a",))
    expect_shown_once(final, 0, 2, ("/c",))


# 9 ---------------------------------------------------------------------------


@_scenario(
    "retained-command-replayed",
    "A retained command is replayed with the same ID and is not executed again",
    "If the agent does retain and replay it, it uses the same ID and reports the message without "
    "executing the command again.",
    scenario_config("retained-command-replayed", alphabet=("/c",), losses=1, resumes=1),
    [
        submit(0, "/c"), agent_gets(0), insert(0, "retained"), respond(0), echo(1),
        client_gets(0, "ok"), client_gets(0, "user_message"),
        ("ConnectionLost", 0), ("ClientResume", 0, "replay"), resume(0, "whole"),
        client_gets(0, "user_message"), client_gets(0, "resumed"),
    ],
)
def _retained_command(final: System, trace: Trace) -> None:
    """The replay reported message 1 under ID 1 and the command ran once."""
    cmd = conversation_message(final, 1)
    require(cmd.kind == "command" and cmd.retained, "message 1 should be a retained command")
    replay = [m[1] for _, _, m in sent_messages(trace, "user_message") if m[3]]
    require(replay == [1], f"the replay should report message 1, it reported {replay}")
    require(cmd.runs == 1, f"the command should have run once, it ran {cmd.runs} times")
    expect_acknowledged(final, 0, 1, 1)
    expect_shown_once(final, 0, 1, ("/c",))


# 10 --------------------------------------------------------------------------


@_scenario(
    "lost-response-retry",
    "A lost response leaves the submission unknown; a retry creates a second message (the limitation, not a fix)",
    "Cover the lost-response limitation rather than promising recovery",
    scenario_config("lost-response-retry", losses=1, resumes=1, retries=1),
    [
        submit(0), agent_gets(0), insert(0),
        ("ConnectionLost", 0),
        ("ClientResume", 0, "replay"), resume(0, "whole"), client_gets(0, "user_message"), client_gets(0, "resumed"),
        ("ClientRetryPrompt", 0, 1), agent_gets(0), insert(1), respond(1), echo(2),
        client_gets(0, "ok"), client_gets(0, "user_message"),
    ],
)
def _lost_retry(final: System, trace: Trace) -> None:
    """Prompt 1 stays unknown though replay showed message 1; its retry became message 2; retry_does_not_duplicate is violated."""
    first = submission_of(final, 0, 1)
    require(first.status == "unknown" and first.mid == 0,
           f"the lost submission should stay unknown and unassociated, it is {first.status} with message {first.mid}")
    contents = [m.content for m in final.agent.conv]
    require(contents == ["a", "a"], f"the retry should have created a second message, the conversation is {contents}")
    expect_shown_once(final, 0, 1, ("a",))
    expect_acknowledged(final, 0, 3, 2)
    msg = _CORE.property_by_id("retry_does_not_duplicate").check(final)
    require(msg, "retry_does_not_duplicate should report the second message (the RFD's known limitation)")


# 11 --------------------------------------------------------------------------


@_scenario(
    "streamed-replay-no-duplicate",
    "Replay by chunks over a copy the client already holds: user_message content [] first, then the chunk",
    "When replay reconstructs a user message from its beginning using chunks, the agent MUST first send a "
    "user_message update with content: [].",
    scenario_config("streamed-replay-no-duplicate", chunks=True, losses=1, resumes=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1, "chunk"),
        client_gets(0, "ok"), client_gets(0, "chunk"),
        ("ConnectionLost", 0), ("ClientResume", 0, "replay"), resume(0, "chunks"),
        client_gets(0, "user_message"), client_gets(0, "chunk"), client_gets(0, "resumed"),
    ],
)
def _streamed_replay(final: System, trace: Trace) -> None:
    """The replay cleared message 1 with content [] before its chunk; the client's content equals the agent's, no duplicate."""
    n = step_number(trace, resume(0, "chunks"))
    sent = [m for _, m in trace[n - 1][1].emitted if m[0] in ("user_message", "chunk")]
    require(sent == [("user_message", 1, (), True, None), ("chunk", 1, "a", True)],
           f"the replay should send user_message [] then the chunk, it sent {sent}")
    cleared = trace[step_number(trace, client_gets(0, "user_message")) - 1][1].state
    require(view_entries(cleared, 0, 1) == [(1, (), False)], "content [] should clear the client's copy")
    expect_shown_once(final, 0, 1, ("a",))
    require((conversation_message(final, 1).content,) == ("a",), "the agent's content should be a")


# 12 --------------------------------------------------------------------------


@_scenario(
    "failure-before-response",
    "Work fails after insertion, before the response: the response succeeds, the idle reports the error",
    "Exercise a failure after insertion but before the response is sent: the response still succeeds and "
    "the idle update reports the failure.",
    scenario_config("failure-before-response", failures=1),
    [
        submit(0), agent_gets(0), insert(0), BEGIN, ("AgentFailWork", "stops-work"), respond(0), echo(1),
        client_gets(0, "state"), client_gets(0, "state"), client_gets(0, "ok"), client_gets(0, "user_message"),
    ],
)
def _failure_before_response(final: System, trace: Trace) -> None:
    """The prompt was answered with messageId 1, and the idle carried stopReason error with error -32000."""
    n_fail, n_ok = step_number(trace, ("AgentFailWork", "stops-work")), step_number(trace, respond(0))
    require(n_fail < n_ok, "the failure should come before the response")
    require(final.agent.reqs[0].answers == (("ok", 1),), f"the prompt should succeed with message 1, got {final.agent.reqs[0].answers}")
    require(idle_updates_sent(trace) == [("state", IDLE, "error", ERR_FAILURE)],
           f"one idle with stopReason error and error {ERR_FAILURE} should be sent, got {idle_updates_sent(trace)}")
    expect_acknowledged(final, 0, 1, 1)
    require(final.clients[0].fg == IDLE, "the client should see the session idle")


# 13 --------------------------------------------------------------------------


@_scenario(
    "cancel-request-wins",
    "$/cancel_request reaches the agent before insertion: session/prompt is answered -32800, never inserted",
    "This includes request cancellation: a $/cancel_request or internal cancellation answers session/prompt "
    "with -32800 only before insertion.",
    scenario_config("cancel-request-wins", cancels=1),
    [submit(0), ("ClientCancelRequest", 0, 1), agent_gets(0, "prompt"), agent_gets(0, "cancel_req"), client_gets(0, "err")],
)
def _cancel_wins(final: System, trace: Trace) -> None:
    """The request was rejected with -32800, nothing was inserted or echoed, and the client dropped its optimistic copy."""
    r = final.agent.reqs[0]
    require(r.phase == "rejected" and r.answers == (("err", ERR_CANCELLED),) and not r.ever_inserted,
           f"the prompt should be rejected with {ERR_CANCELLED} before insertion, it is {r.phase} with {r.answers}")
    require(not final.agent.conv and not sent_messages(trace, "user_message") and not sent_messages(trace, "chunk"), "nothing should be inserted or echoed")
    require(submission_of(final, 0, 1).status == "rejected" and final.clients[0].view == (), "the client should drop the rejected prompt")


@_scenario(
    "insertion-wins",
    "Insertion comes before the $/cancel_request: the request still succeeds with its messageId; "
    "session/cancel then stops the work",
    "Afterwards the request still succeeds with the messageId, and the work is stopped with session/cancel.",
    scenario_config("insertion-wins", cancels=2),
    [
        submit(0), agent_gets(0, "prompt"), insert(0), ("ClientCancelRequest", 0, 1), agent_gets(0, "cancel_req"),
        respond(0), echo(1), BEGIN, client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"),
        ("ClientCancelSession", 0), agent_gets(0, "cancel"), ("AgentEndWork", "cancelled"), client_gets(0, "state"),
    ],
)
def _insertion_wins(final: System, trace: Trace) -> None:
    """The cancel reached the agent after insertion and before the response; the response was a success with message 1; session/cancel ended the work cancelled."""
    n = step_number(trace, agent_gets(0, "cancel_req"))
    pre = trace[n - 1][0]
    require(pre.agent.reqs[0].phase == "inserted" and not pre.agent.reqs[0].answers,
           "the cancel should reach the agent after insertion and before the response")
    require(not trace[n - 1][1].emitted, "the late $/cancel_request should send nothing")
    require(final.agent.reqs[0].answers == (("ok", 1),), f"the prompt should succeed with message 1, got {final.agent.reqs[0].answers}")
    expect_acknowledged(final, 0, 1, 1)
    expect_shown_once(final, 0, 1, ("a",))
    require(idle_updates_sent(trace) == [("state", IDLE, "cancelled", 0)], f"session/cancel should end the work cancelled, got {idle_updates_sent(trace)}")


# 14 --------------------------------------------------------------------------

_RFD_240 = S240_RULES
_CANCEL_HELD = scenario_config("session-cancel-held-prompt", hold=True, cancels=1, agent_work=1)


@_scenario(
    "session-cancel-held-prompt",
    "session/cancel while a prompt is held: answered -32800, never echoed "
    "(rules rfd+2.4.0: the RFD lets the agent choose, the 2.4.0 schema requires it)",
    "This includes request cancellation: a $/cancel_request or internal cancellation answers session/prompt "
    "with -32800 only before insertion.",
    _CANCEL_HELD,
    [
        ("AgentInitiateWork",), client_gets(0, "state"),
        submit(0), agent_gets(0, "prompt"), ("AgentHold", 0),
        ("ClientCancelSession", 0), agent_gets(0, "cancel"), ("AgentEndWork", "cancelled"),
        client_gets(0, "err"), client_gets(0, "state"),
    ],
    rules=_RFD_240,
)
def _cancel_held(final: System, trace: Trace) -> None:
    """The held prompt was answered -32800 and never inserted or echoed; the running work ended cancelled."""
    r = final.agent.reqs[0]
    require(r.phase == "rejected" and r.answers == (("err", ERR_CANCELLED),) and not r.ever_inserted,
           f"the held prompt should be rejected with {ERR_CANCELLED}, it is {r.phase} with {r.answers}")
    require(not final.agent.conv and not sent_messages(trace, "user_message") and not sent_messages(trace, "chunk"), "the held prompt should never be echoed")
    require(idle_updates_sent(trace) == [("state", IDLE, "cancelled", 0)], f"the work should end cancelled, got {idle_updates_sent(trace)}")
    require(submission_of(final, 0, 1).status == "rejected", "the client should see its prompt rejected")
    offered = [st.action for st in Lifecycle(_CANCEL_HELD, _RFD_240).next_steps(final)]
    require(not offered, f"nothing should be left to do, the model offers {offered}")


# 15 --------------------------------------------------------------------------


@_scenario(
    "abort-raises-still-cancelled",
    "Aborting cancelled work raises an error: the idle still says cancelled, not error",
    "Work is cancelled, even if aborting raises errors\tIdle `state_update` with `stopReason: \"cancelled\"`, "
    "as the cancellation rules already require",
    scenario_config("abort-raises-still-cancelled", failures=1, cancels=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1), BEGIN,
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"),
        ("ClientCancelSession", 0), agent_gets(0, "cancel"), ("AgentFailWork", "while-cancelling"),
        client_gets(0, "state"),
    ],
)
def _abort_raises(final: System, trace: Trace) -> None:
    """The failure during cancellation ended the work with stopReason cancelled and no error object."""
    require(idle_updates_sent(trace) == [("state", IDLE, "cancelled", 0)],
           f"one idle with stopReason cancelled and no error should be sent, got {idle_updates_sent(trace)}")
    require(final.agent.stop == "cancelled" and final.agent.work is None, "the work should have ended cancelled")
    expect_acknowledged(final, 0, 1, 1)


# 16 --------------------------------------------------------------------------


@_scenario(
    "failure-retried-work-continues",
    "A failure the agent retries: a notice, the foreground state does not change, the work ends normally",
    "Fails, and work continues (a retried request, a failed tool)\tA `notice` or a tool call with status "
    "`failed`; the state does not change",
    scenario_config("failure-retried-work-continues", failures=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1), BEGIN, ("AgentFailAndRetry",), END,
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"), client_gets(0, "notice"),
        client_gets(0, "state"),
    ],
)
def _fail_and_retry(final: System, trace: Trace) -> None:
    """AgentFailAndRetry sent only a notice and left the agent as it was; the work then ended with end_turn."""
    n = step_number(trace, ("AgentFailAndRetry",))
    pre, st = trace[n - 1]
    require([m for _, m in st.emitted] == [("notice",)], f"the failure should send one notice, it sent {st.emitted}")
    require(st.state.agent == pre.agent and st.state.agent.fg == RUNNING, "the failure should not change the agent's state")
    require(idle_updates_sent(trace) == [("state", IDLE, "end_turn", 0)], f"the work should end with end_turn, got {idle_updates_sent(trace)}")


# 17 --------------------------------------------------------------------------


@_scenario(
    "background-failure-while-idle",
    "Background activity fails while idle: a notice, no stop reason, no state change",
    "Background activity fails while the Agent is `idle`\tNot a stop reason, since no foreground work ended",
    scenario_config("background-failure-while-idle", failures=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1), BEGIN, END,
        ("AgentFailInBackground",),
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"), client_gets(0, "state"),
        client_gets(0, "notice"),
    ],
)
def _background_failure(final: System, trace: Trace) -> None:
    """AgentFailInBackground sent one notice and no state_update; the agent stayed idle with stopReason end_turn."""
    n = step_number(trace, ("AgentFailInBackground",))
    pre, st = trace[n - 1]
    require([m for _, m in st.emitted] == [("notice",)], f"the failure should send one notice, it sent {st.emitted}")
    require(st.state.agent == pre.agent, "the failure should not change the agent's state")
    require(final.agent.fg == IDLE and final.agent.stop == "end_turn", "the agent should stay idle with end_turn")
    require(final.clients[0].fg == IDLE, "the client should still see idle")


# 18 --------------------------------------------------------------------------


@_scenario(
    "agent-initiated-work",
    "The agent starts foreground work without a prompt: running, then idle",
    "This can even allow the agent to initiate an interaction in a session rather than requiring it to wait "
    "for a user prompt, which is becoming increasingly important for background tasks and agents which may "
    "send updates before or after a “turn” is over since its runtime might be different than the main "
    "conversation.",
    scenario_config("agent-initiated-work", prompts=0, agent_work=1),
    [("AgentInitiateWork",), client_gets(0, "state"), END, client_gets(0, "state")],
)
def _agent_initiated(final: System, trace: Trace) -> None:
    """The client saw running then idle (end_turn) with no session/prompt and no user message."""
    states = [(m[1], m[2]) for _, _, m in sent_messages(trace, "state")]
    require(states == [(RUNNING, ""), (IDLE, "end_turn")], f"the client should see running then idle, it saw {states}")
    require(not final.agent.reqs and not final.agent.conv, "no prompt and no user message should exist")
    require(final.clients[0].fg == IDLE, "the client should end idle")


# 19 --------------------------------------------------------------------------


@_scenario(
    "stale-idle",
    "An idle from earlier work reaches a client whose prompt is not processed yet; the client does not take it "
    "as completion (claude-agent-acp#480)",
    "Insertion is distinct from processing completion and does not require persistent history.",
    scenario_config("stale-idle", agent_work=1),
    [
        ("AgentInitiateWork",), submit(0), END,
        client_gets(0, "state"), client_gets(0, "state"),
        agent_gets(0), insert(0), respond(0), echo(1), BEGIN, END,
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"), client_gets(0, "state"),
    ],
)
def _stale_idle(final: System, trace: Trace) -> None:
    """The first idle reached the client while its prompt was unprocessed, and the client's done list stayed empty throughout."""
    stale = _CORE.property_by_id("sometimes_stale_idle")
    require(any(stale.check(pre, st) for pre, st in trace), "an idle should reach the client before its prompt is processed")
    require(all(not st.state.clients[0].done for _, st in trace), "the client should never believe a prompt processed from an idle")
    expect_acknowledged(final, 0, 1, 1)
    require(final.agent.stop == "end_turn" and final.agent.work is None, "the prompt's own work should end")


# Beyond the checklist -----------------------------------------------------------


@_scenario(
    "failed-tool-before-error-idle",
    "Work fails with a tool call in progress: the tool call is marked failed, then the error idle; nothing after it",
    "Before sending it, the Agent SHOULD give each tool call that the failed work left unfinished a terminal "
    "status, using failed for calls that did not complete.",
    scenario_config("failed-tool-before-error-idle", failures=1, tool_calls=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1), BEGIN,
        ("AgentToolCall", 1, "start"), ("AgentToolCall", 1, "run"), ("AgentFailWork", "stops-work"),
        client_gets(0, "ok"), client_gets(0, "user_message"), client_gets(0, "state"),
        client_gets(0, "tool"), client_gets(0, "tool"), client_gets(0, "tool"), client_gets(0, "state"),
    ],
)
def _failed_tool(final: System, trace: Trace) -> None:
    """The failure sent tool call 1 failed and then the idle with stopReason error; no update followed it."""
    n = step_number(trace, ("AgentFailWork", "stops-work"))
    sent = [m for _, m in trace[n - 1][1].emitted]
    require(sent == [("tool", 1, "failed", False), ("state", IDLE, "error", ERR_FAILURE)],
           f"the failure should send tool call 1 failed, then the error idle; it sent {sent}")
    later = [m for k, _, m in sent_messages(trace, "tool") if k > n]
    require(not later, f"no tool call update should follow the idle, got {later}")
    expect_acknowledged(final, 0, 1, 1)


@_scenario(
    "resume-without-replay",
    "A client resumes without replayFrom: no message is replayed; its association is kept",
    "Omitting replayFrom resumes without replay.",
    scenario_config("resume-without-replay", losses=1, resumes=1),
    [
        submit(0), agent_gets(0), insert(0), respond(0), echo(1), client_gets(0, "ok"), client_gets(0, "user_message"),
        ("ConnectionLost", 0), ("ClientResume", 0, "no-replay"), resume(0, "none"), client_gets(0, "resumed"),
    ],
)
def _no_replay(final: System, trace: Trace) -> None:
    """The resume sent only its response; the client still shows message 1 once, associated with its prompt."""
    n = step_number(trace, resume(0, "none"))
    sent = [m for _, m in trace[n - 1][1].emitted]
    require(sent == [("resumed", 2)], f"the resume without replayFrom should send only its response, it sent {sent}")
    cl = final.clients[0]
    require(cl.connected and not cl.resuming and not cl.replayed, "the client should be resumed, without replay")
    expect_acknowledged(final, 0, 1, 1)
    expect_shown_once(final, 0, 1, ("a",))


# The cancellation races of docs/findings.md ----------------------------------------


@_scenario(
    "cancel-stops-next-work",
    "A session/cancel sent while client 0's work ran arrives after that work ended and stops the work for "
    "client 1's prompt (an open question of the RFD)",
    "Broader v2 lifecycle follow-ups include cancellation races and current-state synchronization on resume.",
    scenario_config("cancel-stops-next-work", clients=2, cancels=1, down_latency=False),
    [
        submit(0), agent_gets(0), insert(0), BEGIN, ("ClientCancelSession", 0), respond(0), END,
        submit(1), agent_gets(1), insert(1), BEGIN, agent_gets(0, "cancel"), ("AgentEndWork", "cancelled"),
    ],
)
def _cancel_next(final: System, trace: Trace) -> None:
    """Client 0 cancelled work #1; the cancel reached the agent during work #2, which ended cancelled."""
    race = _CORE.property_by_id("session_cancel_stops_only_work_it_saw")
    hits = [race.check(pre, st) for pre, st in trace]
    require(any(hits), "the open question should show: the cancel stops work it was not sent for")
    require(final.agent.stop == "cancelled", "work #2 (client 1's prompt) should end cancelled")
    require(final.agent.serial == 2, "two pieces of work should have run")


@_scenario(
    "cancel-rejects-another-clients-prompt",
    "Under the 2.4.0 reading, client 1's session/cancel of the running work also rejects client 0's prompt, "
    "which was waiting to be inserted",
    "Cancels a session's foreground work and its prompts not yet inserted. (2.4.0 CancelSessionNotification)",
    scenario_config("cancel-rejects-another-clients-prompt", clients=2, cancels=1, agent_work=1, down_latency=False),
    [
        ("AgentInitiateWork",), submit(0), agent_gets(0), ("ClientCancelSession", 1), agent_gets(1, "cancel"),
        ("AgentEndWork", "cancelled"),
    ],
    rules=S240_RULES,
)
def _cancel_other(final: System, trace: Trace) -> None:
    """Client 0 never cancelled, yet its prompt was answered -32800 and never inserted."""
    sub = submission_of(final, 0, 1)
    require(sub.status == "rejected", "client 0's prompt should be rejected")
    errs = [m for _, st in trace for c, m in st.emitted if c == 0 and m[0] == "err"]
    require(errs == [("err", 1, ERR_CANCELLED)], "the rejection should be -32800, sent by client 1's cancel")
    require(not final.agent.conv, "nothing should be inserted")


SCENARIOS: dict[str, Scenario] = {sc.name: sc for sc in _SCENARIOS}


def run(name_or_scenario: str | Scenario) -> ScenarioRun:
    """Play a scenario of the catalogue by its name (or any ``Scenario``): see ``core.play``.

    >>> run("echo-before-response").final.clients[0].view
    ((1, ('a',), False),)
    """
    if isinstance(name_or_scenario, Scenario):
        return play(name_or_scenario)
    try:
        sc = SCENARIOS[name_or_scenario]
    except KeyError:
        raise ScenarioError(f"unknown scenario {name_or_scenario!r}; known: {', '.join(SCENARIOS)}") from None
    return play(sc)

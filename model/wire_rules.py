"""The wire rules: what ``acp-lifecycle trace`` checks, each with its level, rule set and clauses.

Data, no logic: ``RULES`` is the registry (rule id -> ``Rule``), ``Finding`` one
broken rule at a transcript line. The monitor that applies them is
``model/monitor/`` (which re-exports these names); ``docs/clauses.md`` lists,
per clause, the rules that cite it.

A rule names its clause ids (``model/clauses/``) and the rule set that makes
it binding: ``rfd`` (the RFD, or JSON-RPC itself) or ``2.4.0`` (the normative
text of the 2.4.0 schema).

>>> RULES["distinct_message_ids"].clause
'RFD-ID-DISTINCT'
"""

from __future__ import annotations

from dataclasses import dataclass

from .clauses import lookup
from .judges import JUDGES
from .config import STOP_REASONS

__all__ = [
    "DEFAULT_RULES",
    "FINAL_TOOL",
    "Finding",
    "KNOWN_STOP_REASONS",
    "REPLAYED",
    "RULES",
    "RULE_SETS",
    "Rule",
    "STANDARD_STATES",
    "USER",
    "V1_STOP_REASONS",
    "WORKING",
    "add_proposal_rules",
]

RULE_SETS = ("rfd", "rfd+2.4.0")
DEFAULT_RULES = "rfd+2.4.0"

KNOWN_STOP_REASONS = STOP_REASONS
V1_STOP_REASONS = tuple(r for r in STOP_REASONS if r != "error")
WORKING = ("running", "requires_action")
STANDARD_STATES = WORKING + ("idle",)
FINAL_TOOL = ("completed", "failed", "cancelled")
USER = ("user_message", "user_message_chunk")
REPLAYED = USER + ("agent_message", "agent_message_chunk", "agent_thought", "agent_thought_chunk")


# ---------------------------------------------------------------------------
# Rules


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the monitor: a claim about observed messages."""

    id: str
    #: MUST, MUST NOT, SHOULD or SHOULD NOT: the strength of the rule
    level: str
    #: "rfd" (the RFD, or JSON-RPC) or "2.4.0" (only the 2.4.0 text says it)
    since: str
    summary: str
    #: clause ids of model/clauses/, the first one quoted in findings
    clauses: tuple[str, ...] = ()
    #: for the JSON-RPC envelope: (source, verbatim sentence)
    external: tuple[str, str] | None = None
    #: the proposal whose judge it is (``model/proposals``); "" for the core's
    proposal: str = ""

    @property
    def clause(self) -> str:
        if self.clauses:
            return self.clauses[0]
        return self.external[0] if self.external else ""

    @property
    def quote(self) -> str:
        """The first clause's sentence, with its source (line breaks of the source joined)."""
        if self.clauses:
            return quote_of(self.clauses[0])
        if self.external:
            return f'{self.external[0]}: "{self.external[1]}"'
        return ""


_JSONRPC = "JSON-RPC 2.0"


def quote_of(cid: str) -> str:
    """A clause's sentence, with its source (line breaks of the source joined); "" for no clause."""
    c = lookup(cid)
    return f'{c.source}: "{" ".join(c.text.split())}"' if c is not None else ""


def _judge_rule(judge_id: str) -> Rule:
    """The wire rule of a judge (``model/judges/``): its one definition, level, rule set and clauses."""
    j = JUDGES[judge_id]
    return Rule(j.id, j.level, j.since, j.summary, j.clauses)


_RULES = (
    # --- the JSON-RPC envelope ---------------------------------------------------
    Rule("wire_message_is_json", "MUST", "rfd", "every line on the wire is one JSON-RPC message",
         external=(_JSONRPC, "It uses JSON (RFC 4627) as data format.")),
    Rule("schema_valid", "MUST", "rfd", "every message validates against the 2.4.0 schema for its method"),
    Rule("request_id_not_null", "MUST NOT", "2.4.0", "a request id is a string or an integer, never null",
         ("S240-REQID-NOT-NULL",)),
    Rule("request_id_not_reused", "MUST NOT", "rfd", "a sender never reuses the id of its own pending request",
         ("S240-REQID-NO-REUSE",)),
    Rule("response_matches_a_request", "MUST", "rfd",
         "a response carries, exactly, the id of a pending request of the other side",
         ("S240-REQID-SAME-VALUE",)),
    _judge_rule("one_response_per_request"),
    Rule("every_request_answered", "MUST", "rfd", "every request is answered by the end of the log",
         ("JSONRPC-REPLY",)),
    _judge_rule("every_prompt_answered"),
    _judge_rule("cancelled_request_still_answered"),
    # --- sessions on a connection ---------------------------------------------------
    Rule("updates_only_for_opened_sessions", "MUST", "rfd",
         "messages name only sessions the connection created (before or after the session/new response) or resumed",
         ("S240-NEW-UPDATES-EITHER-SIDE",)),
    # --- prompts and message IDs --------------------------------------------------
    Rule("prompt_not_empty", "MUST NOT", "2.4.0", "the client never sends an empty prompt", ("S240-PROMPT-NOT-EMPTY",)),
    _judge_rule("success_carries_message_id"),
    _judge_rule("distinct_message_ids"),
    _judge_rule("every_inserted_message_echoed"),
    # --- foreground state ---------------------------------------------------------
    Rule("stop_reason_only_after_work", "MUST", "2.4.0",
         "a new session reports running before an idle that ends work with a stop reason",
         ("S240-STATE-REPORT-RUNNING", "S240-STATE-NEW-IDLE", "S240-STATE-LOCAL-COMMANDS")),
    _judge_rule("no_second_stop_reason"),
    _judge_rule("error_only_with_error_stop_reason"),
    _judge_rule("custom_stop_reason_prefixed"),
    _judge_rule("no_update_after_idle_of_its_work"),
    _judge_rule("tools_terminal_before_error_idle"),
    Rule("error_idle_has_details", "SHOULD", "rfd", "an idle that ends work with stopReason error carries the error object",
         ("RFD-ERROR-DETAILS", "S240-ERROR-DETAILS-SHOULD")),
    Rule("stop_reason_when_work_ends", "SHOULD", "2.4.0",
         "the idle that ends foreground work carries a stop reason", ("S240-STOP-SHOULD-INCLUDE",)),
    Rule("requires_action_then_running", "MUST", "2.4.0",
         "after requires_action, running is reported before a foreground tool call starts or runs to completion",
         ("S240-REQACTION-THEN-RUNNING", "S240-STATE-RESUME-RUNNING")),
    Rule("standard_states_reported", "MUST", "2.4.0",
         "work reported only by a custom state (idle, custom, idle) is not reported to a client that advertised no extension",
         ("S240-STATE-STANDARD-STATES",)),
    # --- cancellation ---------------------------------------------------------------
    _judge_rule("cancelled_work_ends_cancelled"),
    _judge_rule("cancelled_only_when_cancelled"),
    Rule("cancelled_work_reported_idle", "MUST", "2.4.0",
         "work active when session/cancel arrives is reported idle by the end of the log",
         ("S240-CANCEL-IDLE-CANCELLED", "S240-STATE-IDLE-WHEN-NONE", "S240-STATE-REPORT-IDLE")),
    Rule("cancel_stops_waiting_for_permissions", "MUST", "2.4.0",
         "session/cancel ends the work without waiting for its pending permission requests",
         ("S240-CANCEL-PERM-STOP-WAITING", "S240-PERM-AGENT-CANCELS")),
    Rule("pending_permissions_cancelled", "SHOULD", "2.4.0",
         "permission requests pending when work is cancelled get $/cancel_request before its idle",
         ("S240-CANCEL-PERM-CANCEL-REQUEST", "S240-PERM-AGENT-CANCELS")),
    Rule("not_approved_not_proceeded", "MUST NOT", "2.4.0",
         "a tool call whose permission was not approved (cancelled, unknown option, or cut by session/cancel) does not run",
         ("S240-PERM-CANCELLED-NOT-PROCEED", "S240-PERM-UNKNOWN-OPTION", "S240-CANCEL-PERM-STOP-WAITING",
          "S240-CANCEL-IGNORE-LATE-ANSWERS", "S240-STATE-IGNORE-LATE-RESPONSES")),
    # --- background work -----------------------------------------------------------
    Rule("background_on_every_state_update", "MUST", "2.4.0",
         "once a background list is reported, every state_update of the session carries one",
         ("S240-BACKGROUND-EVERY-UPDATE",)),
    Rule("background_items_announced", "MUST", "2.4.0",
         "a background item is announced on the connection before the first snapshot listing it",
         ("S240-BACKGROUND-ANNOUNCE",)),
    Rule("background_final_before_removal", "MUST", "2.4.0",
         "a background item's final status comes before the snapshot that drops it",
         ("S240-BACKGROUND-FINAL-BEFORE-REMOVAL",)),
    # --- resume and replay ---------------------------------------------------------
    _judge_rule("resume_snapshot_before_response"),
    Rule("snapshot_after_replay", "MUST", "2.4.0", "the resume snapshot follows the replayed messages",
         ("S240-STATE-RESUME-SNAPSHOT",)),
    Rule("resume_snapshot_is_current", "MUST", "2.4.0",
         "the resume snapshot agrees with the state connections already attached are told",
         ("S240-STATE-RESUME-SNAPSHOT",)),
    Rule("replayed_ids_are_known", "MUST", "rfd",
         "a connection attached since session/new is replayed only user messageIds the session used live",
         ("RFD-REPLAY-SAME-ID", "S240-RESPONSE-REPLAY-KEEPS-ID", "RFD-COMMAND-REPLAY-SAME-ID")),
    _judge_rule("no_replay_without_replay_from"),
    _judge_rule("chunked_replay_resets_first"),
    Rule("unsupported_replay_cursor_rejected", "MUST", "2.4.0",
         "a replayFrom other than {type: start} or a custom _ cursor is rejected with -32602",
         ("S240-RESUME-CURSOR-REJECT",)),
    # --- tool_call/cancel --------------------------------------------------------
    Rule("tool_cancel_only_if_advertised", "MUST NOT", "2.4.0",
         "the client sends tool_call/cancel only for a tool call advertising capabilities.cancel",
         ("S240-TOOLCANCEL-ADVERTISED",)),
    Rule("tool_cancel_rejects_final", "MUST", "2.4.0",
         "tool_call/cancel of an unknown or final tool call is answered -32602", ("S240-TOOLCANCEL-REJECT",)),
    Rule("tool_cancel_confirmed", "MUST", "2.4.0",
         "an accepted tool_call/cancel is confirmed by a final tool_call_update", ("S240-TOOLCANCEL-CONFIRM",)),
)

#: Every rule of the monitor, by id.
RULES: dict[str, Rule] = {r.id: r for r in _RULES}
assert len(RULES) == len(_RULES), "duplicate rule id"


def add_proposal_rules(proposals) -> None:
    """Register the wire rule of every judge of ``proposals`` (``acp_lifecycle.model`` calls it once the
    proposal registry is loaded): ``trace`` judges a log with every proposal's rules."""
    for p in proposals:
        for j in p.judges:
            if j.id in RULES and RULES[j.id].proposal != p.name:
                raise ValueError(f"proposal {p.name!r}: rule {j.id!r} is already a rule")
            RULES[j.id] = Rule(j.id, j.level, j.since, j.summary, j.clauses, proposal=p.name)


@dataclass
class Finding:
    """One broken rule: where (line), which (property = rule id), how bad, what happened."""

    line: int
    property: str
    severity: str
    message: str
    #: the clause about its case, when that is not its rule's first (``model.judges.Cite``)
    cite: str = ""

    @property
    def rule(self) -> Rule | None:
        return RULES.get(self.property)

    @property
    def clause(self) -> str:
        r = self.rule
        return self.cite or (r.clause if r else "")

    @property
    def quote(self) -> str:
        if self.cite:
            return quote_of(self.cite)
        r = self.rule
        return r.quote if r else ""

    def data(self) -> dict:
        return {
            "line": self.line,
            "property": self.property,
            "severity": self.severity,
            "message": self.message,
            "clause": self.clause,
            "quote": self.quote,
        }

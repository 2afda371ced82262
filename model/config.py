"""Bounds of one exploration, and the rules the model's participants follow.

``Config`` is *how much* may happen (clients, prompts, faults): every budget is a
bound that keeps the state space finite. ``Rules`` is *what* the participants
do where a spec variant or a seeded bug differs from the RFD: the composed model
(``system.py``) asks the rules at each point of choice, so a variant or a bug is
a small value, not a fork of the model.

Both are frozen, hashable values; ``Config.validate`` gives a one-line error for
out-of-range values (the CLI turns it into exit status 2).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

#: The stop reasons of an idle ``state_update`` (the five of v1 plus ``error``).
#: Here rather than in ``machines`` (which re-exports it): that module builds
#: python-statemachine classes, which a search does not need.
STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error")

__all__ = ["Config", "ConfigError", "Rules", "RFD_RULES", "S240_RULES", "RULE_SETS", "rule_set", "LIMITS", "EXTRA_LIMITS",
           "NORMAL_STOP_REASONS", "RULE_VALUES", "rule_value_error"]


class ConfigError(ValueError):
    """A configuration value is out of range; the message is one line."""


#: Inclusive ranges for the integer bounds. Beyond them the state space is too
#: large for an exhaustive search on a 2-core machine (or the model does not
#: define the value: the alphabet has three symbols).
LIMITS: dict[str, tuple[int, int]] = {
    "clients": (1, 3),
    "prompts": (0, 3),
    "total_prompts": (0, 9),
    "tool_calls": (0, 2),
    "tool_refinements": (0, 3),
    "permissions": (0, 2),
    "failures": (0, 3),
    "cancels": (0, 3),
    "resumes": (0, 3),
    "restarts": (0, 2),
    "losses": (0, 3),
    "imports": (0, 2),
    "agent_work": (0, 2),
    "retries": (0, 2),
}

#: The proposals a text composes of itself (``Proposal.spec``): spec -> proposal names, registered when the
#: proposal registry is loaded (a method of the 2.4.0 schema may be modelled so: ``model/proposals``)
IMPLICIT: dict[str, tuple[str, ...]] = {}

#: The ranges of the bounds proposals add (``model/proposals``, ``Config.extra``), registered when the
#: proposal registry is loaded: the core's bounds are ``LIMITS``.
EXTRA_LIMITS: dict[str, tuple[int, int]] = {}

#: Prompt contents. "a" and "b" are ordinary prompts; "/c" is a locally handled
#: command ("Locally handled commands follow the same rule by inserting a
#: live-only user message").
ALPHABET = ("a", "b", "/c")

#: Stop reasons a normal end of work may carry: the four the schema names for
#: it, ``""`` (no stop reason: "Idle, whenever the agent is done, with optional
#: data on why") and ``"_custom"`` (2.4.0: "Values beginning with `_` are
#: reserved for implementation-specific extensions."). ``error`` and
#: ``cancelled`` come from failures and cancels.
NORMAL_STOP_REASONS = tuple(r for r in STOP_REASONS if r not in ("error", "cancelled")) + ("", "_custom")


@dataclass(frozen=True, slots=True)
class Config:
    """How much may happen in one exploration. Every field is a budget."""

    name: str = "custom"
    clients: int = 1
    #: prompts each client may submit (retries not counted)
    prompts: int = 1
    #: prompts all clients together may submit (0: no cap beyond clients x
    #: prompts). Three clients with two prompts each, at most four in all,
    #: has every pair of a client's two prompts beside another client's
    total_prompts: int = 0
    #: prompt contents each submission chooses from (a tuple of ALPHABET symbols)
    alphabet: tuple[str, ...] = ("a",)
    #: tool calls over the whole run
    tool_calls: int = 0
    #: tool_call_updates without a status over the whole run: they only refine a
    #: call (title, input, content), as claude-agent-acp sends before and after
    #: a permission request ("omitted fields are unchanged"). 0 in the named
    #: configurations; ``trace --model`` counts them in the transcript
    tool_refinements: int = 0
    #: permission requests (running -> requires_action) over the whole run
    permissions: int = 0
    #: provider failures over the whole run (at any point: before insertion,
    #: after insertion before the response, while work runs or is cancelled, or
    #: while idle)
    failures: int = 0
    #: client cancels: `$/cancel_request` and `session/cancel` share this budget
    cancels: int = 0
    #: `session/resume` requests (a client resumes after losing its connection)
    resumes: int = 0
    #: agent process restarts (live-only messages forgotten, connections lost)
    restarts: int = 0
    #: connection losses (undelivered messages dropped both ways)
    losses: int = 0
    #: imported messages (an agent-generated ID with no prompt response)
    imports: int = 0
    #: pieces of agent-initiated foreground work (no prompt)
    agent_work: int = 0
    #: client retries of a submission whose response was lost
    retries: int = 0
    #: stop reasons a normal end of work may carry (error/cancelled come from
    #: failures and cancels); one is enough unless stop reasons are the subject
    stop_reasons: tuple[str, ...] = ("end_turn",)
    #: explore holding a prompt before insertion (as distinct from leaving it received)
    hold: bool = False
    #: explore reserving an ID before insertion
    reserve: bool = True
    #: explore foreground work that starts before insertion (a foreground hook)
    hook: bool = True
    #: explore live-only (not retained) insertion of ordinary prompts; commands
    #: are always explored both ways
    live_only: bool = True
    #: explore streamed (`user_message_chunk`) echoes beside whole `user_message`
    chunks: bool = True
    #: explore a live echo by chunk followed by a metadata-only user_message
    #: (``content`` omitted: "A metadata-only update does not clear content")
    meta: bool = False
    #: explore a permission request sent before the `requires_action` that
    #: reports it (neither text orders them; an agent on the official SDK does
    #: it). Off in the named configurations, whose state counts are pinned;
    #: ``trace --model`` turns it on
    request_first: bool = False
    #: explore a client sending `session/cancel` (or a proposal's message that cancels the same
    #: work) while it believes nothing runs and no prompt waits ("Clients MAY cancel ... at
    #: any time"; a cancel that finds nothing changes nothing). Off in the named
    #: configurations, where it only adds states; ``trace --model`` turns it on
    idle_cancel: bool = False
    #: explore the agent withdrawing, with `$/cancel_request`, a permission request it no longer
    #: waits for later than the step that stopped waiting: after `session/cancel` at any point
    #: before the idle (2.4.0: "It SHOULD cancel each of them with `$/cancel_request`", at no set
    #: moment), and when a failure ends work blocked on one, before that failure's idle (the
    #: request's sender "cancels an ongoing request"; `bridge serve` does both for a v1 agent).
    #: Off in the named configurations, whose state counts are pinned; ``trace --model`` and the
    #: live agent turn it on
    withdraw_permission: bool = False
    #: explore the agent rejecting a `session/resume` with an error (-32602) and attaching no one:
    #: a session it does not know (the model has one session; a resume naming another is answered
    #: so by published agents, as a `session/prompt` for it is). Off in the named configurations;
    #: ``trace --model`` turns it on
    reject_resume: bool = False
    #: agent -> client messages wait in a FIFO channel until a delivery step
    #: (True), or reach the client in the step that sends them (False: see
    #: docs/model.md, "Instant delivery to clients", for why the verdicts agree)
    down_latency: bool = True
    #: the bounds proposals add (``model/proposals``): ((name, value), ...) sorted; a bound not
    #: named here is 0. Their ranges are in ``LIMITS`` once the proposal registry is loaded
    extra: tuple[tuple[str, int], ...] = ()

    def bound(self, name: str) -> int:
        """A bound a proposal adds (0 when this configuration does not give it)."""
        for k, v in self.extra:
            if k == name:
                return v
        return 0

    def get(self, name: str) -> int:
        """The value of a bound: one of ``LIMITS`` or one a proposal adds."""
        return getattr(self, name) if name in LIMITS else self.bound(name)

    def validate(self) -> "Config":
        """Return self, or raise ConfigError naming the first bad field."""
        for f in fields(self):
            if f.name in LIMITS:
                lo, hi = LIMITS[f.name]
                value = getattr(self, f.name)
                if not isinstance(value, int) or not lo <= value <= hi:
                    raise ConfigError(f"{f.name}={value!r} is out of range {lo}..{hi}")
        for name, value in self.extra:
            if name not in EXTRA_LIMITS:
                raise ConfigError(f"{name}={value!r}: no bound of that name (a proposal's bound needs its proposal)")
            lo, hi = EXTRA_LIMITS[name]
            if not isinstance(value, int) or not lo <= value <= hi:
                raise ConfigError(f"{name}={value!r} is out of range {lo}..{hi}")
        if not self.alphabet or any(s not in ALPHABET for s in self.alphabet):
            raise ConfigError(f"alphabet={self.alphabet!r}: symbols must come from {ALPHABET}")
        bad = [r for r in self.stop_reasons if r not in NORMAL_STOP_REASONS]
        if not self.stop_reasons or bad:
            raise ConfigError(
                f"stop_reasons={self.stop_reasons!r}: choose from end_turn, max_tokens, "
                "max_turn_requests, refusal, '' (none) and _custom (error and cancelled come from "
                "failures and cancels)"
            )
        return self

    @property
    def submissions(self) -> int:
        """How many prompts the clients may submit in all (retries not counted)."""
        most = self.clients * self.prompts
        return min(most, self.total_prompts) if self.total_prompts else most

    def with_(self, **changes) -> "Config":
        """A copy with some bounds changed, validated; a proposal's bound goes into ``extra``."""
        own = {f.name for f in fields(self)}
        extra = {k: v for k, v in changes.items() if k not in own}
        if extra:
            changes = {k: v for k, v in changes.items() if k in own}
            changes["extra"] = tuple(sorted({**dict(self.extra), **extra}.items()))
        return replace(self, **changes).validate()


@dataclass(frozen=True, slots=True)
class Rules:
    """What the participants do at each point where a variant or a bug differs.

    The default value is the RFD as written. Every field documents the RFD
    reading it encodes; a spec variant or a seeded bug changes a few fields.
    """

    name: str = "rfd"

    # --- the rule set ------------------------------------------------------
    #: the text the rules follow: "rfd" (the RFD as written) or "rfd+2.4.0"
    #: (the RFD refined by the 2.4.0 schema text). Properties of the 2.4.0
    #: text are judged only under "rfd+2.4.0" (``Property.spec``).
    spec: str = "rfd"
    #: the agent may also skip what a SHOULD asks for (MUSTs only): end work
    #: without a stop reason (2.4.0), leave tool calls unfinished before an
    #: error idle, keep a permission request of cancelled work uncancelled,
    #: block work on a permission request without reporting `requires_action`.
    #: SHOULD properties are then reported, not failed (``Verdict.expect``).
    lenient: bool = False

    # --- prompt response -------------------------------------------------
    #: when the agent may answer successfully: "insertion" (RFD), "receipt"
    #: (before insertion), "reserve" (when it reserves an ID)
    respond_at: str = "insertion"
    #: code the agent answers an inserted-but-unanswered prompt with when a
    #: failure or `$/cancel_request` comes before the response; 0 = it answers
    #: success (RFD: "MUST NOT report a later failure as an error response")
    error_after_insertion: int = 0
    #: answer `$/cancel_request` with -32800 even after insertion
    cancel_after_insertion: bool = False
    #: end work normally while a prompt it took still waits for its response
    #: (the agent waits for processing to finish before answering)
    respond_late: bool = False

    # --- message IDs -------------------------------------------------------
    #: "v2", or "v1": the response ends the turn with a stopReason, failures are
    #: error responses, and there is no state_update
    protocol: str = "v2"

    #: answer session/prompt at all (False: the FAQ's "Prompt as a notification")
    prompt_response: bool = True
    #: the success carries the messageId (False: the result is `{}`, as in the June 2026 draft;
    #: a client then learns which message its prompt became from the echo alone)
    response_message_id: bool = True

    #: how IDs are made: "counter" (fresh, persisted across restart),
    #: "content" (same content -> same ID), "restart-resets" (counter forgotten
    #: at restart), "jsonrpc-id" (the request's JSON-RPC id), "client" (each
    #: client numbers its own messages)
    id_scheme: str = "counter"
    #: echo under the returned ID (False: under another ID)
    echo_same_id: bool = True
    #: echo inserted messages at all
    echo: bool = True

    # --- ending work -------------------------------------------------------
    #: send an idle after a failure ends work
    idle_after_failure: bool = True
    #: stop reason when a failure happens during cancellation (abort raised)
    abort_stop_reason: str = "cancelled"
    #: stop reason for cancelled work
    cancel_stop_reason: str = "cancelled"
    #: after ending cancelled work, also send a second idle with this reason
    #: when the next prompt arrives ("" = never)
    second_stop_reason: str = ""
    #: keep one tool call of ended work alive and update it after the idle
    tool_update_after_idle: bool = False
    #: put an error object beside a normal stop reason
    error_beside_stop_reason: bool = False
    #: how a failure that ends work is reported: "error-idle" (RFD), or the
    #: FAQ's alternatives "failed-state", "error-update", "notice"
    failure_report: str = "error-idle"
    #: give unfinished tool calls a terminal status before an error idle
    fail_tools_before_error_idle: bool = True
    #: put the error object it has on the error idle ("The Agent SHOULD include it")
    error_details: bool = True
    #: report `requires_action` when it blocks foreground work on a permission
    #: request (2.4.0: "The agent SHOULD report `requires_action` when the
    #: foreground workflow as a whole cannot progress without user action,
    #: including permissions or elicitations"). False: it sends only the
    #: `session/request_permission`, the state it last reported stays
    #: `running`, and the answer has nothing new to report. A lenient agent
    #: explores both
    report_requires_action: bool = True

    # --- cancellation ----------------------------------------------------
    #: `session/cancel` also rejects prompts not yet inserted with -32800:
    #: "may" (RFD: the agent may do so, as internal cancellation), "must"
    #: (2.4.0, all of them in the step that receives the cancel) or "later"
    #: (2.4.0 read to the letter: the cancel covers them, so they are never
    #: inserted, and the agent rejects each with -32800 at any point after it;
    #: an agent processes the cancel concurrently with the work it stops, so
    #: updates of that work may come first. ``trace --model`` explains with it)
    cancel_rejects_held: str = "may"
    #: on `session/cancel`, cancel the pending permission request of the
    #: cancelled work with `$/cancel_request` (2.4.0 SHOULD; the RFD, silent
    #: about permission requests, allows it)
    cancel_permissions: bool = True

    # --- resume and replay -------------------------------------------------
    #: send a current `state_update` after replay and before the resume
    #: response: "may" (RFD leaves it open) or "must" (2.4.0)
    resume_snapshot: str = "may"
    #: send `user_message` with `content: []` before replayed chunks
    replay_reset: bool = True
    #: replay retained messages under their original IDs
    replay_same_id: bool = True
    #: replay each retained message whole or by chunks independently (False:
    #: one mode for the whole replay). Either is what the RFD allows; the
    #: named rule sets keep one mode (their state counts are pinned), and
    #: ``trace --model`` explains with every mix
    replay_mixed: bool = False
    #: execute a replayed command again
    replay_executes_commands: bool = False
    #: replay even when `replayFrom` is omitted
    replay_without_replay_from: bool = False

    # --- clients -----------------------------------------------------------
    #: how a client associates its submission with a message: "response"
    #: (RFD), "content" (first echo with equal content), "order" (next echo)
    client_associates_by: str = "response"
    #: on the response, drop the optimistic copy when the echo came first
    client_reconciles: bool = True
    #: take the next idle as completion of the client's own pending prompts
    client_idle_completes: bool = False
    #: a replayed user message carries the submission's correlation token
    #: (the FAQ's possible future client-generated token)
    correlation_token: bool = False

    # --- proposals ------------------------------------------------------------------
    #: the protocol changes composed with the core (``model/proposals``), by name, sorted
    proposals: tuple[str, ...] = ()
    #: the values of their flags that differ from each flag's default: ((name, value), ...) sorted
    flags: tuple[tuple[str, object], ...] = ()

    # --- the model's functions ------------------------------------------------
    #: the component functions (``parts.Parts``), for a mutant that replaces one;
    #: None: the model's own
    parts: object = None

    def with_(self, **changes) -> "Rules":
        return replace(self, **changes)

    @property
    def all_proposals(self) -> tuple[str, ...]:
        """The proposals these rules compose: ``proposals``, and those of the text they follow (``IMPLICIT``:
        a proposal of the 2.4.0 schema is composed by every rule set that follows it), sorted."""
        implicit = IMPLICIT.get(self.spec, ())
        if not implicit:
            return self.proposals
        have = {p.split("!")[0] for p in self.proposals}
        return tuple(sorted(self.proposals + tuple(p for p in implicit if p not in have)))

    def composes(self, proposal: str) -> bool:
        """Whether these rules compose ``proposal`` (as itself, or with one of its faults: ``NAME!FAULT``)."""
        return any(p == proposal or p.startswith(proposal + "!") for p in self.all_proposals)

    def flag(self, name: str, default=None):
        """The value of a proposal's flag under these rules (``default`` when they do not set it)."""
        for k, v in self.flags:
            if k == name:
                return v
        return default


RFD_RULES = Rules()

#: The RFD refined by the 2.4.0 schema text: what an agent built on the SDK
#: must follow. Each field below is a 2.4.0 sentence the RFD leaves open.
S240_RULES = RFD_RULES.with_(
    name="rfd+2.4.0",
    spec="rfd+2.4.0",
    # "Resume MUST send a current-state snapshot after any replay and before its response."
    resume_snapshot="must",
    # "Cancels a session's foreground work and its prompts not yet inserted."
    cancel_rejects_held="must",
)

#: The rule sets ``check --rules`` offers.
RULE_SETS: dict[str, Rules] = {"rfd": RFD_RULES, "rfd+2.4.0": S240_RULES}


def rule_set(name: str) -> Rules:
    """The named rule set; ``KeyError`` with a one-line message otherwise."""
    try:
        return RULE_SETS[name]
    except KeyError:
        raise KeyError(f"unknown rule set {name!r}; choose one of: {', '.join(RULE_SETS)}") from None


#: The values a variant (``model/variants``) may give each ``Rules`` field: its allowed set. A bool
#: field takes False or True; a str field one of the readings its comment above names; the int field
#: a JSON-RPC error code the model answers with (model/state.py), or 0 for none. ``name``, ``spec``,
#: ``proposals``, ``flags`` and ``parts`` are no choice a variant makes (the file's name, its base,
#: its ``proposals`` key, its proposals' flags, a mutant's functions).
_ANY_STOP_REASON = STOP_REASONS + ("", "_custom")
RULE_VALUES: dict[str, tuple] = {
    **{f.name: (False, True) for f in fields(Rules) if type(f.default) is bool},
    "respond_at": ("insertion", "receipt", "reserve"),
    # 0: it answers success; -32000 failure, -32602 invalid, -32603 internal, -32800 cancelled
    "error_after_insertion": (0, -32000, -32602, -32603, -32800),
    "protocol": ("v2", "v1"),
    "id_scheme": ("counter", "content", "restart-resets", "jsonrpc-id", "client"),
    "abort_stop_reason": _ANY_STOP_REASON,
    "cancel_stop_reason": _ANY_STOP_REASON,
    "second_stop_reason": _ANY_STOP_REASON,
    "failure_report": ("error-idle", "failed-state", "error-update", "notice"),
    "cancel_rejects_held": ("may", "must", "later"),
    "resume_snapshot": ("may", "must"),
    "client_associates_by": ("response", "content", "order"),
}


def value_text(value) -> str:
    """A value as a TOML file writes it: ``true``, ``"may"``, ``-32000``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def allowed_error(name: str, value, allowed: tuple) -> str:
    """"" when ``value`` is one of ``allowed`` (of the same type: ``1`` is no ``true``); else one line
    naming ``name``, the value and the allowed values."""
    if any(type(value) is type(a) and value == a for a in allowed):
        return ""
    return f"{name} = {value_text(value)} is not allowed; choose one of: {', '.join(map(value_text, allowed))}"


def rule_value_error(name: str, value) -> str:
    """"" when a variant may give the ``Rules`` field ``name`` the value ``value``; else one line saying why."""
    if name not in RULE_VALUES:
        return f"{name} is no Rules field a variant may change (model/config.py)"
    return allowed_error(name, value, RULE_VALUES[name])

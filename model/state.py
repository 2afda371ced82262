"""The state of the composed model: one session, one agent, N clients, FIFO channels.

Every value here is a frozen ``NamedTuple`` (hashable, so the explorers can keep
a seen-set); ``System`` is the whole state. Ghost fields (marked ``ghost``)
record facts a property needs and the participants never read. The steps that
move the state are in ``agent.py`` (the agent) and ``clients.py`` (the
clients); ``system.py`` composes them into ``successors``.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from .config import Config
from .judges import start
from .records import compile_replace

__all__ = [
    "Req",
    "Msg",
    "Work",
    "Agent",
    "Sub",
    "Client",
    "Used",
    "System",
    "Step",
    "initial_state",
    "ERR_CANCELLED",
    "ERR_INVALID",
    "ERR_FAILURE",
    "ERR_INTERNAL",
    "ACTION_KINDS",
    "IDLE",
    "RUNNING",
    "REQUIRES_ACTION",
    "NOT_INSERTED",
    "CLIENT_KINDS",
    "AGENT_KINDS",
    "IDS_AT",
]

#: Every action name a step can carry (``Step.action[0]``), Actor + Verb.
ACTION_KINDS = (
    # transport: delivering the head of a channel
    "AgentReceive",
    "AgentResume",
    "ClientReceive",
    # the agent and its prompts
    "AgentHold",
    "AgentReserveId",
    "AgentInsert",
    "AgentRejectPrompt",
    "AgentRespond",
    "AgentEcho",
    # foreground work
    "AgentBeginWork",
    "AgentInitiateWork",
    "AgentToolCall",
    "AgentRequestPermission",
    "AgentEndWork",
    # faults
    "AgentFailWork",
    "AgentFailAndRetry",
    "AgentFailInBackground",
    "AgentImportMessage",
    "AgentRestart",
    "ConnectionLost",
    # clients
    "ClientSubmitPrompt",
    "ClientRetryPrompt",
    "ClientCancelRequest",
    "ClientCancelSession",
    "ClientAnswerPermission",
    "ClientResume",
)

# JSON-RPC error codes the model uses.
ERR_CANCELLED: Final = -32800  # request cancelled ($/cancel_request, session/cancel)
ERR_INVALID: Final = -32602  # rejected before insertion (invalid input, busy, failure)
ERR_FAILURE: Final = -32000  # provider failure after insertion ("Authentication required")
ERR_INTERNAL: Final = -32603  # error object put beside a normal stop reason by a bug

IDLE: Final = "idle"
RUNNING: Final = "running"
REQUIRES_ACTION: Final = "requires_action"
NOT_INSERTED: Final = ("received", "held", "reserved")


class Req(NamedTuple):
    """A ``session/prompt`` as the agent received it."""

    cid: int  # client index
    rid: int  # JSON-RPC request id
    content: str
    phase: str  # PromptRequestMachine state
    mid: int  # message id (0 = none yet)
    answers: tuple  # ghost: every response sent, ("ok", mid) or ("err", code)
    orphan: bool  # its connection is gone: a response would go nowhere
    ever_inserted: bool  # ghost: was ever inserted
    had_work_before_insertion: bool  # foreground work already ran for it before insertion (bounds that loop)
    #: ghost: under rfd+2.4.0, a session/cancel (which covers prompts not yet inserted) reached the agent before its insertion
    session_cancel_before_insertion: bool
    #: ghost: its message was inserted and waited for work when a session/cancel stopped other work
    waiting_at_session_cancel: bool = False


class Msg(NamedTuple):
    """A message in the agent's conversation."""

    mid: int
    content: str
    retained: bool  # False: live-only (never replayed)
    origin: int  # index of its request in Agent.reqs, -1 for imported messages
    kind: str  # "prompt" | "command" | "import"
    owed: int  # bitmask of clients that are owed the live echo
    runs: int  # ghost: how often a command was executed
    audience: int  # ghost: clients attached at insertion whose connection has not been lost since


class Work(NamedTuple):
    """The foreground work in progress."""

    serial: int  # ghost: counts pieces of work
    inputs: tuple  # message ids this work processes
    tools: tuple  # ((tool id, ToolCallMachine state), ...)
    cancelling: bool  # session/cancel received
    perm: int  # outstanding permission request id (0 = none)
    before_insertion_of: int  # ghost: for work before insertion, 1 + the index of the request it runs for (0 = none)


class Agent(NamedTuple):
    fg: str  # the foreground state last reported (ForegroundMachine state)
    stop: str  # stop reason of the last idle reported ("" none)
    work: Work | None
    reqs: tuple[Req, ...]  # in order of receipt
    conv: tuple[Msg, ...]  # the conversation, in order
    pending: tuple  # inserted message ids no work has taken yet (sorted)
    next_id: int  # message id counter
    attached: int  # bitmask of clients whose connection resumed the session
    issued: tuple  # ghost: ((mid, origin), ...) every ID ever assigned (sorted)
    ended_tools: frozenset  # ghost: tool ids of work that has ended
    stragglers: tuple  # tool ids a buggy agent keeps updating after the idle
    serial: int  # serial of the last work begun


class Sub(NamedTuple):
    """A prompt as the submitting client sees it."""

    rid: int
    content: str
    status: str  # SubmissionMachine state
    mid: int  # associated message id (0 = none)
    retry_of: int  # rid of the lost submission this one retries (0 = none)


class Client(NamedTuple):
    connected: bool
    resuming: int  # 0, or 1 (resume without replay) / 2 (with replay) awaiting its response
    replayed: bool  # completed a resume with replay on this connection
    # ((key, content tuple, optimistic), ...) sorted by key; key = mid, or -rid
    # for a submission not yet associated. Sorted, not in arrival order: no
    # rule here reads placement, and the order would multiply states.
    view: tuple
    subs: tuple[Sub, ...]
    fg: str  # last foreground state seen
    # permission requests awaiting an answer: ((pid, "open" | "ignored" |
    # "cancelled"), ...); "ignored": the user sent session/cancel instead of
    # answering; "cancelled": the agent cancelled it with $/cancel_request
    perms: tuple
    next_rid: int
    submitted: int  # prompts submitted (retries not counted)
    done: tuple  # rids the client believes processed (only a buggy client fills it)
    missed_messages: bool  # ghost: a lost connection dropped agent messages on their way to it


class Used(NamedTuple):
    """How much of each Config budget has been spent."""

    failures: int = 0
    cancels: int = 0
    resumes: int = 0
    restarts: int = 0
    losses: int = 0
    imports: int = 0
    agent_work: int = 0
    tools: int = 0
    refinements: int = 0
    perms: int = 0
    retries: int = 0


class System(NamedTuple):
    agent: Agent
    clients: tuple[Client, ...]
    up: tuple  # per client: messages client -> agent, head first
    down: tuple  # per client: messages agent -> client, head first
    used: Used
    # what the judges remember of what each connection carried (``judges/``): per
    # judge with a state, per client, in the order of ``judges.STATEFUL``; a history
    # variable no participant reads
    seen: tuple = ()
    # what the proposals the rules compose keep (``model/proposals``): one value per proposal, in the
    # order of ``Rules.proposals``; () for the core alone
    ext: tuple = ()


for _cls in (Req, Msg, Work, Agent, Sub, Client, Used, System):
    compile_replace(_cls)


class Step(NamedTuple):
    """One transition: the action's label, the next state, what the agent sent."""

    action: tuple  # ("ActorVerb", args...)
    state: System
    emitted: tuple  # ((client index, message), ...) sent by the agent, in order
    #: what the judges with a state found wrong in the step: ((judge id, message), ...)
    found: tuple = ()


compile_replace(Step)


#: The kinds of the core's messages (``msg[0]``), listed below: a proposal's kinds are others.
CLIENT_KINDS = ("prompt", "cancel_req", "cancel", "perm_ans", "resume")
AGENT_KINDS = ("ok", "err", "v1_prompt_result", "user_message", "chunk", "state", "tool", "perm", "perm_cancel", "notice",
               "error_update", "resumed")
#: where a core message carries a message ID (the symmetry reduction renames it)
IDS_AT = {"ok": (2,), "user_message": (1,), "chunk": (1,)}

# ---------------------------------------------------------------------------
# Messages. Client -> agent:
#   ("prompt", rid, content)          session/prompt
#   ("cancel_req", rid)               $/cancel_request for a prompt
#   ("cancel", serial)                session/cancel (serial: ghost, the work running when sent)
#   ("perm_ans", pid, outcome)        response to session/request_permission ("selected" | "cancelled")
#   ("resume", rid, replay)           session/resume [replayFrom: {type: "start"}]
# Agent -> client:
#   ("ok", rid, mid)                  session/prompt result {messageId}
#   ("err", rid, code)                session/prompt error response
#   ("v1_prompt_result", rid, stop)   v1 session/prompt result {stopReason} (protocol v1 only)
#   ("user_message", mid, content, replay, token)  user_message (content: tuple; () = []; None = omitted)
#   ("chunk", mid, symbol, replay)    user_message_chunk
#   ("state", fg, stop, errcode)      state_update (errcode 0 = no error object)
#   ("tool", tid, status, first)      tool_call_update (first: the report that announces the call)
#   ("perm", pid)                     session/request_permission
#   ("perm_cancel", pid)              $/cancel_request for a permission request
#   ("notice",)                       notice (advisory)
#   ("error_update", code)            an error update (a rejected FAQ alternative only)
#   ("resumed", rid)                  session/resume result
# ---------------------------------------------------------------------------


def initial_state(cfg: Config, seen: tuple | None = None, ext: tuple = ()) -> System:
    """A new session: idle, every client attached, nothing sent yet (``seen``: what the judges of the
    rule set remember at the start, the core's by default; ``ext``: the proposals' states)."""
    n = cfg.clients
    client = Client(True, 0, False, (), (), IDLE, (), 1, 0, (), False)
    agent = Agent(IDLE, "", None, (), (), (), 1, (1 << n) - 1, (), frozenset(), (), 0)
    return System(agent, (client,) * n, ((),) * n, ((),) * n, Used(), start(n) if seen is None else seen, ext)



def replace_at(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1 :]


class Outbox:
    """Accumulates what the agent sends in one step."""

    __slots__ = ("down", "emitted", "attached")

    def __init__(self, s: System):
        self.down = list(s.down)
        self.emitted: list = []
        self.attached = s.agent.attached

    def send(self, cid: int, msg: tuple) -> None:
        self.down[cid] = self.down[cid] + (msg,)
        self.emitted.append((cid, msg))

    def broadcast(self, msg: tuple, mask: int | None = None) -> None:
        mask = self.attached if mask is None else mask & self.attached
        cid = 0
        while mask:
            if mask & 1:
                self.send(cid, msg)
            mask >>= 1
            cid += 1



def commit(s: System, a: Agent, o: Outbox) -> System:
    return s._replace(agent=a, down=tuple(o.down))



def find_req(a: Agent, c: int, rid: int) -> int | None:
    for i, r in enumerate(a.reqs):
        if r.cid == c and r.rid == rid and not r.orphan:
            return i
    return None


def find_sub(cl: Client, rid: int) -> int | None:
    for j, sub in enumerate(cl.subs):
        if sub.rid == rid:
            return j
    return None

"""Spec variants: the RFD as written, its refinements, and the alternatives its FAQ rejects.

A variant is a small, named change to the ``Rules`` the model agent and clients
follow, never a fork of the model. To add one, append a ``Variant`` below:
its name, the text it stands for, and the ``Rules`` fields it changes. Where a
variant changes what the RFD leads us to expect of a property (a limitation it
fixes, an open question it closes), say so in ``expect``; where a property
cannot be stated for it, list it in ``not_applicable``.

``acp-lifecycle variants`` runs every variant and prints the verdict matrix;
``acp-lifecycle regress`` compares it with the agreed one in docs/verdicts.json.
"""

from __future__ import annotations

from dataclasses import dataclass

from dataclasses import fields

from ..config import RFD_RULES, S240_RULES, Rules

__all__ = ["Variant", "VARIANTS", "get_variant"]


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    summary: str
    source: str
    changes: tuple[tuple[str, object], ...] = ()
    #: property id -> expectation under this variant, where it differs from the RFD's
    expect: tuple[tuple[str, str], ...] = ()
    #: properties that cannot be stated for this variant
    not_applicable: tuple[str, ...] = ()
    #: properties the RFD keeps and this variant is expected to break (the FAQ's argument)
    worse_on: tuple[str, ...] = ()

    @property
    def rules(self) -> Rules:
        return RFD_RULES.with_(name=self.name, **dict(self.changes))

    def expectation(self, prop) -> str:
        """The property's expectation under this variant ("" when it is no rule of the variant's rule set)."""
        return dict(self.expect).get(prop.id, prop.expectation(self.rules))


def _v(name, summary, source, changes=None, expect=None, not_applicable=(), worse_on=()) -> Variant:
    return Variant(
        name,
        summary,
        source,
        tuple(sorted((changes or {}).items())),
        tuple(sorted((expect or {}).items())),
        tuple(not_applicable),
        tuple(worse_on),
    )


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        _v("rfd", "the RFD as written", "v2 Prompt Lifecycle RFD, revision 2026-10-01"),
        _v(
            "rfd+2.4.0",
            "the rule set rfd+2.4.0: the RFD refined by the 2.4.0 schema text (a current state_update "
            "after replay and before the resume response; session/cancel answers prompts not yet inserted "
            "with -32800; the rules of the 2.4.0 text judged too)",
            "the descriptions of schema/v2 in @agentclientprotocol/sdk@2.4.0",
            {f.name: getattr(S240_RULES, f.name) for f in fields(Rules)
             if f.name != "name" and getattr(S240_RULES, f.name) != getattr(RFD_RULES, f.name)},
        ),
        _v(
            "v1",
            "the v1 lifecycle: session/prompt answers at the end of the turn with a stopReason, failures "
            "are error responses, no state_update, no messageId in the response",
            "v1 prompt turn (docs/protocol/v1/prompt-turn.mdx); the RFD: \"v1's session/prompt is unchanged\"",
            {"protocol": "v1"},
            not_applicable=(
                "success_carries_message_id",
                "inserted_prompt_never_rejected",
                "rejected_submission_never_echoed",
                "failed_work_ends_with_error_idle",
                "cancelled_work_ends_cancelled",
                "tools_terminal_before_error_idle",
                "error_only_with_error_stop_reason",
                "no_second_stop_reason",
                "ended_work_reported_idle",
                "single_canonical_copy",
                "association_points_at_own_submission",
                "client_completion_belief_is_true",
                "client_sees_current_state",
                "resumed_client_sees_current_state",
                "lost_response_recoverable",
                "answered_before_its_work_ends",
                "error_idle_only_for_failure",
                "cancelled_idle_only_for_cancel",
                "state_changes_only_with_work",
                "error_idle_carries_details",
            ),
        ),
        _v(
            "ack-at-receipt",
            "acknowledge session/prompt when it is received, before insertion",
            "FAQ: Require acknowledgment before insertion",
            {"respond_at": "receipt"},
            worse_on=("success_only_after_insertion",),
        ),
        _v(
            "jsonrpc-id-as-message-id",
            "the request's JSON-RPC id is the message ID",
            "FAQ: Reuse the JSON-RPC request ID",
            {"id_scheme": "jsonrpc-id"},
            worse_on=("distinct_message_ids",),
        ),
        _v(
            "client-chosen-message-id",
            "each client numbers its own messages and the agent uses that number",
            "FAQ: Let the client choose the canonical message ID",
            {"id_scheme": "client"},
            worse_on=("distinct_message_ids",),
        ),
        _v(
            "prompt-as-notification",
            "session/prompt is a notification: no response, no error for a rejected prompt",
            "FAQ: Prompt as a notification",
            {"prompt_response": False},
            not_applicable=("success_carries_message_id", "one_response_per_request", "answered_before_its_work_ends"),
            worse_on=("every_prompt_answered",),
        ),
        _v(
            "failed-state",
            "a failure ends work with a `failed` state instead of idle + error, seen by a client that predates it",
            "FAQ: Report failures after insertion with a `failed` state",
            {"failure_report": "failed-state"},
            worse_on=("client_sees_current_state", "failed_work_ends_with_error_idle"),
        ),
        _v(
            "separate-error-update",
            "a failure is an error update followed by an idle without the error stop reason",
            "FAQ: Report failures after insertion with a separate error update",
            {"failure_report": "error-update"},
            worse_on=("failed_work_ends_with_error_idle",),
        ),
        _v(
            "error-notice",
            "a failure is an error-severity notice (which clients may ignore), then an idle",
            "FAQ: Report failures after insertion with an error-severity notice",
            {"failure_report": "notice"},
            worse_on=("failed_work_ends_with_error_idle",),
        ),
        _v(
            "error-beside-stop-reason",
            "stopReason stays a plain string and `error` is a sibling field the schema cannot tie to it",
            "FAQ: Put `error` beside the stop reason with a cross-field rule",
            {"error_beside_stop_reason": True},
            worse_on=("error_only_with_error_stop_reason",),
        ),
        _v(
            "client-correlation-token",
            "a client-generated token on the prompt, carried by the user message live and in replay",
            "FAQ: Client-generated correlation token (a possible future addition)",
            {"correlation_token": True},
            expect={"lost_response_recoverable": "must_hold"},
        ),
    )
}


def get_variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r}; `acp-lifecycle variants --list` shows them") from None

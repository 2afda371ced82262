"""Spec variants, the committed verdict matrix, and `regress`."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from acp_lifecycle.model.properties import BY_ID, properties_of
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.model.variants import VARIANTS
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.check import check_suite
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.variants import to_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"
AGREED = json.loads((DOCS / "verdicts.json").read_text())


def test_the_matrix_covers_every_variant_and_property():
    _columns_agree(AGREED, VARIANTS)


def _columns_agree(agreed: dict, variants: dict) -> None:
    """The agreed matrix's columns follow the variants' order, each with every property. A variant with
    no column yet is no failure (``regress`` names it and the command that pins it), nor is a column
    whose variant is gone (``regress --accept`` drops it)."""
    live = [n for n in agreed["variants"] if n in variants]
    assert live == [n for n in variants if n in agreed["variants"]]
    for name, cells in agreed["variants"].items():
        # every core property, and those of the proposals the variant composes
        want = set(BY_ID) | ({p.id for p in properties_of(variants[name].rules)} if name in variants else set())
        assert set(cells) == want or name not in variants, name


def test_a_new_variant_without_a_column_and_a_column_without_a_variant_stand_in_no_ones_way():
    variants = {"first": None, **VARIANTS, "new-proposal": None}
    stale = {"config": AGREED["config"], "variants": {**AGREED["variants"], "gone": AGREED["variants"]["rfd"]}}
    _columns_agree(stale, variants)


DEFAULT = get_suite("default")
#: The FAQ's alternatives: the RFD rejects each for what it breaks, so each names it in ``worse_on``.
#: A proposal (or the token, which the FAQ offers as a possible future addition, not an alternative
#: it rejects) may break nothing its base keeps.
FAQ_ALTERNATIVES = [n for n, v in VARIANTS.items() if v.source.startswith("FAQ:") and n != "client-correlation-token"]


@pytest.fixture(scope="module")
def checked():
    """A variant checked now on every member of `default` (not read from docs/verdicts.json: that file
    is what `regress` compares against), once per module."""
    done = {}

    def check(name: str):
        if name not in done:
            done[name] = check_suite(DEFAULT, VARIANTS[name].rules)
        return done[name]

    return check


def _first_violation(variant: str, pid: str):
    """(member, counterexample) to ``pid`` under ``variant``: the first member of `default` that has one."""
    for cfg in DEFAULT.members:
        verdict = explore(cfg, VARIANTS[variant].rules).verdicts[pid]
        if verdict.status == "violated":
            return cfg, verdict
    return None, None


@pytest.mark.parametrize("name", FAQ_ALTERNATIVES)
def test_every_faq_alternative_names_what_it_breaks(name):
    assert VARIANTS[name].worse_on, name


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v.worse_on])
def test_what_a_variant_breaks_its_base_keeps_with_a_counterexample(name, checked):
    v = VARIANTS[name]
    for pid in v.worse_on:
        assert checked(v.base).verdicts[pid].status == "holds", (name, pid)
        cfg, verdict = _first_violation(name, pid)
        assert verdict is not None and verdict.trace, (name, pid)
        # the counterexample is a real run: each step enabled in the state before it
        state = initial_state(cfg, v.rules)
        for pre, step in verdict.trace:
            assert pre == state and step in successors(pre, cfg, v.rules)
            state = step.state


def test_the_correlation_token_makes_the_lost_response_property_hold(checked):
    assert checked("rfd").verdicts["lost_response_recoverable"].status == "violated"
    assert checked("client-correlation-token").verdicts["lost_response_recoverable"].status == "holds"


def test_the_2_4_0_snapshot_rule_closes_the_resume_question(checked):
    assert checked("rfd").verdicts["resumed_client_sees_current_state"].status == "violated"
    assert checked("rfd+2.4.0").verdicts["resumed_client_sees_current_state"].status == "holds"


def test_the_markdown_rendering_is_up_to_date():
    assert (DOCS / "verdicts.md").read_text() == to_markdown(AGREED)


def test_regress_passes_for_an_unchanged_variant(capsys):
    assert main(["regress", "--verdicts", str(DOCS / "verdicts.json"), "--variant", "error-notice"]) == 0
    assert "match" in capsys.readouterr().out


def test_regress_fails_with_a_readable_diff_when_a_rule_of_a_variant_changes(monkeypatch, capsys):
    changed = replace(VARIANTS["rfd+2.4.0"], changes=(("resume_snapshot", "may"),))  # snapshot rule dropped
    monkeypatch.setitem(VARIANTS, "rfd+2.4.0", changed)
    code = main(["regress", "--verdicts", str(DOCS / "verdicts.json"), "--variant", "rfd+2.4.0"])
    out = capsys.readouterr().out
    assert code == 1
    # 7 steps: a prompt submitted, received and inserted, the connection lost, its work begun, and a
    # resume answered with no snapshot, so the client still believes nothing runs
    assert "rfd+2.4.0 / resumed_client_sees_current_state: was holds, now violated (7 steps)" in out
    # 2 steps, the wire's half: a resume answered with no snapshot before its response
    assert "rfd+2.4.0 / resume_snapshot_before_response: was holds, now violated (2 steps)" in out
    assert "session/resume" in out  # the new counterexample, as JSON-RPC
    assert "2 verdict(s) differ" in out


def test_regress_accept_rewrites_a_copy_only_when_told(monkeypatch, capsys, tmp_path):
    copy = tmp_path / "verdicts.json"
    stale = json.loads(json.dumps(AGREED))
    stale["variants"]["error-notice"]["failed_work_ends_with_error_idle"] = {"verdict": "holds"}
    copy.write_text(json.dumps(stale))
    assert main(["regress", "--verdicts", str(copy), "--variant", "error-notice"]) == 1
    assert json.loads(copy.read_text()) == stale  # nothing written without --accept
    assert main(["regress", "--verdicts", str(copy), "--variant", "error-notice", "--accept"]) == 2  # no terminal to ask on
    assert "needs --yes" in capsys.readouterr().err
    assert main(["regress", "--verdicts", str(copy), "--variant", "error-notice", "--accept", "--yes"]) == 0
    assert json.loads(copy.read_text())["variants"]["error-notice"] == AGREED["variants"]["error-notice"]
    assert (tmp_path / "verdicts.md").exists()


@pytest.fixture(scope="module")
def tiny_matrix() -> dict:
    """The verdict matrix of every variant on `tiny` (a second for all of them), as regress writes it."""
    from acp_lifecycle.sims.variants import matrix, to_json

    return to_json(matrix("tiny"))


def _agreed(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def test_regress_names_a_variant_with_no_column_and_pins_that_column_alone(tiny_matrix, tmp_path, capsys):
    agreed = json.loads(json.dumps(tiny_matrix))
    del agreed["variants"]["error-notice"]  # a variant added since the matrix was agreed
    agreed["variants"]["failed-state"]["distinct_message_ids"] = {"verdict": "violated", "steps": 9}  # a wrong cell
    path = _agreed(tmp_path, agreed)
    assert main(["regress", "--verdicts", str(path), "--variant", "error-notice", "--variant", "rfd"]) == 0
    out = capsys.readouterr().out
    assert f"regress: error-notice has no column in {path} (not pinned); pin it with:\n" in out
    assert f"\n  acp-lifecycle regress --accept --yes --variant error-notice --verdicts {path}\n" in out
    assert "regress: 1 variant(s)" in out and json.loads(path.read_text()) == agreed  # nothing written
    assert main(["regress", "--verdicts", str(path), "--variant", "error-notice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unpinned"] == ["error-notice"]
    assert main(["regress", "--accept", "--yes", "--variant", "error-notice", "--verdicts", str(path)]) == 0
    pinned = json.loads(path.read_text())
    assert list(pinned["variants"]) == list(VARIANTS)  # in its place among the columns
    assert pinned["variants"]["error-notice"] == tiny_matrix["variants"]["error-notice"]
    assert pinned["variants"]["failed-state"] == agreed["variants"]["failed-state"]  # the others as they were
    assert {n: c for n, c in pinned["variants"].items() if n != "error-notice"} == agreed["variants"]
    assert (tmp_path / "verdicts.md").read_text() == to_markdown(pinned)


def test_regress_says_a_column_whose_variant_is_gone_and_accept_drops_it(tiny_matrix, tmp_path, capsys):
    agreed = json.loads(json.dumps(tiny_matrix))
    agreed["variants"]["gone"] = agreed["variants"]["rfd"]  # a variant removed since
    agreed["variants"]["rfd"]["distinct_message_ids"] = {"verdict": "violated", "steps": 9}  # and a wrong cell
    path = _agreed(tmp_path, agreed)
    assert main(["regress", "--verdicts", str(path), "--variant", "v1", "--json"]) == 0  # not a failure
    assert json.loads(capsys.readouterr().out)["stale"] == ["gone"]
    assert main(["regress", "--verdicts", str(path), "--variant", "v1"]) == 0
    out = capsys.readouterr().out
    assert f"regress: {path} has a column for gone, which is no variant any more; drop it with:" in out
    # accepting one variant's column touches that column alone: the gone one stays (and renders)
    assert main(["regress", "--verdicts", str(path), "--variant", "rfd", "--accept", "--yes"]) == 0
    assert list(json.loads(path.read_text())["variants"]) == list(VARIANTS) + ["gone"]
    assert "- `gone`: no variant file any more" in (tmp_path / "verdicts.md").read_text()
    assert main(["regress", "--verdicts", str(path), "--accept", "--yes"]) == 0
    assert json.loads(path.read_text()) == tiny_matrix


def test_regress_without_an_agreed_matrix_is_a_one_line_error(capsys, tmp_path):
    assert main(["regress", "--verdicts", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no agreed matrix" in err


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_is_a_small_change_of_rules(name):
    v = VARIANTS[name]
    assert v.rules.name == name and v.source and v.summary
    assert all(pid in BY_ID for pid in v.worse_on + v.not_applicable)


def test_v1_answers_at_the_end_of_the_turn_and_reports_failures_as_errors():
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.explore import explore

    r = explore(get_suite("failures").members[0], VARIANTS["v1"].rules)
    witness = r.verdicts["sometimes_failure_before_response"].trace
    assert witness  # a failure stops work whose prompt is not answered yet...
    ends = [step for _, step in r.verdicts["sometimes_work_ends"].trace] if r.verdicts["sometimes_work_ends"].trace else []
    assert not ends  # ...and no idle state_update exists in v1
    errors = r.verdicts["inserted_prompt_never_rejected"]
    assert errors.status == "violated"  # the v1 error response after insertion (n/a in the matrix)
    assert "inserted_prompt_never_rejected" in VARIANTS["v1"].not_applicable
    assert r.verdicts["success_only_after_insertion"].status == "holds"


# --- a variant is one file ----------------------------------------------------------------------

VARIANT_DIR = Path(__file__).resolve().parent.parent / "model" / "variants"


def test_every_toml_file_of_the_package_is_a_variant_and_nothing_else_is():
    from acp_lifecycle.model.variants import load_variants

    assert sorted(p.stem for p in VARIANT_DIR.glob("*.toml")) == sorted(VARIANTS)
    assert load_variants(VARIANT_DIR) == VARIANTS


def test_a_variant_dropped_into_a_folder_is_picked_up_with_its_base(tmp_path):
    from acp_lifecycle.model.config import S240_RULES
    from acp_lifecycle.model.variants import load_variants

    for name in ("rfd", "rfd+2.4.0"):
        (tmp_path / f"{name}.toml").write_text((VARIANT_DIR / f"{name}.toml").read_text())
    (tmp_path / "no-snapshot.toml").write_text(
        'name = "no-snapshot"\nbase = "rfd+2.4.0"\nsummary = "s"\nsource = "t"\n'
        'worse_on = ["resume_snapshot_before_response"]\n[changes]\nresume_snapshot = "may"\n')
    found = load_variants(tmp_path)
    assert list(found) == ["rfd", "rfd+2.4.0", "no-snapshot"]  # no order: after the others
    v = found["no-snapshot"]
    assert v.rules == S240_RULES.with_(name="no-snapshot", resume_snapshot="may")
    assert v.expectation(BY_ID["resume_snapshot_before_response"]) == "must_hold"  # a rule of its base


HEAD = 'name = "x"\nbase = "rfd"\nsummary = "s"\nsource = "t"\n'


@pytest.mark.parametrize("text, error", [
    (HEAD + "[changes]\nno_such = 1\n", "[changes] no_such is no Rules field a variant may change"),
    (HEAD + '[changes]\ncancel_reject_held = "may"\n', "did you mean cancel_rejects_held?"),
    # a value outside the field's allowed set: once loaded silently, behaving as another reading
    (HEAD + '[changes]\ncancel_rejects_held = "never"\n',
     '[changes] cancel_rejects_held = "never" is not allowed; choose one of: "may", "must", "later"'),
    (HEAD + '[changes]\nfailure_report = "bogus"\n',
     '[changes] failure_report = "bogus" is not allowed; choose one of: "error-idle", "failed-state", '
     '"error-update", "notice"'),
    (HEAD + "[changes]\nerror_after_insertion = 5\n",
     "error_after_insertion = 5 is not allowed; choose one of: 0, -32000"),
    (HEAD + '[changes]\necho = "yes"\n', 'echo = "yes" is not allowed; choose one of: false, true'),
    (HEAD + "[changes]\necho = 1\n", "echo = 1 is not allowed; choose one of: false, true"),
    (HEAD + '[changes]\nspec = "rfd+2.4.0"\n', "spec is no Rules field a variant may change"),
    (HEAD + 'proposals = ["nope"]\n', "proposals: unknown proposal 'nope'; the proposals:"),
    (HEAD + "proposals = [1]\n", "proposals must be a list of names"),
    ('name = "x"\nbase = "v3"\nsummary = "s"\nsource = "t"\n',
     "base 'v3' is no variant and no rule set; choose one of: rfd"),
    ('name = "x"\nbase = "x"\nsummary = "s"\nsource = "t"\n', "only a rule set's file may give"),
    (HEAD + 'worse_on = ["nope"]\n', "no property"),
    ('name = "y"\nbase = "rfd"\nsummary = "s"\nsource = "t"\n', "differs from the file's name"),
    ('name = "x"\nbase = "rfd"\nsource = "t"\n', "summary is missing"),
    (HEAD + "colour = 1\n", "unknown key"),
    ('name = "x"\nbase = \n', "not TOML"),
])
def test_a_malformed_variant_file_is_one_line_naming_it(tmp_path, text, error):
    from acp_lifecycle.model.variants import VariantError, load_variants

    (tmp_path / "x.toml").write_text(text)
    with pytest.raises(VariantError) as e:
        load_variants(tmp_path)
    assert error in str(e.value) and str(e.value).startswith("x.toml: ") and "\n" not in str(e.value), str(e.value)


def test_every_field_a_variant_may_change_has_its_allowed_values_and_every_variant_keeps_to_them():
    from dataclasses import fields

    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.model.config import RULE_SETS, RULE_VALUES, Rules, rule_value_error

    fixed = {"name", "spec", "proposals", "flags", "parts"}
    assert set(RULE_VALUES) == {f.name for f in fields(Rules)} - fixed
    for rules in [*RULE_SETS.values(), *(v.rules for v in VARIANTS.values()), *(b.rules for b in BUGS.values())]:
        for name in RULE_VALUES:
            assert not rule_value_error(name, getattr(rules, name)), (rules.name, name)


def _write(folder: Path, name: str, base: str, body: str = "") -> None:
    (folder / f"{name}.toml").write_text(f'name = "{name}"\nbase = "{base}"\nsummary = "s"\nsource = "t"\n{body}')


def test_a_variant_may_stand_on_another_and_inherits_its_rules_and_expectations(tmp_path):
    from acp_lifecycle.model.variants import lineage, load_variants

    for name in ("rfd", "client-correlation-token"):
        (tmp_path / f"{name}.toml").write_text((VARIANT_DIR / f"{name}.toml").read_text())
    # named so that it sorts before its base: built after it all the same
    _write(tmp_path, "a-token-and-notices", "client-correlation-token",
           'not_applicable = ["success_carries_message_id"]\n[changes]\nfailure_report = "notice"\n')
    _write(tmp_path, "a-token-notices-by-content", "a-token-and-notices",
           '[changes]\nclient_associates_by = "content"\n')
    found = load_variants(tmp_path)
    v = found["a-token-notices-by-content"]
    assert v.rules == found["client-correlation-token"].rules.with_(
        name=v.name, failure_report="notice", client_associates_by="content")
    assert dict(v.expect) == {"lost_response_recoverable": "must_hold"}  # the token's, inherited
    assert v.not_applicable == ("success_carries_message_id",)
    assert lineage(v.name, found) == ["rfd", "client-correlation-token", "a-token-and-notices", v.name]


def test_bases_that_go_round_in_a_circle_are_one_line(tmp_path):
    from acp_lifecycle.model.variants import VariantError, load_variants

    _write(tmp_path, "a", "b")
    _write(tmp_path, "b", "c")
    _write(tmp_path, "c", "a")
    with pytest.raises(VariantError, match=r"^c.toml: its bases go round in a circle \(a -> b -> c -> a\)"):
        load_variants(tmp_path)


@pytest.mark.parametrize("body", [
    "",  # no change at all
    '[changes]\nresume_snapshot = "must"\n',  # its base's value already
    '[expect]\nlost_response_recoverable = "must_hold"\n',  # an expectation is no rule
])
def test_a_variant_whose_rules_equal_its_bases_is_unchanged(tmp_path, body):
    from acp_lifecycle.model.variants import load_variants

    _write(tmp_path, "same", "rfd+2.4.0", body)
    _write(tmp_path, "same-again", "same")
    _write(tmp_path, "other", "same", '[changes]\nresume_snapshot = "may"\n')
    found = load_variants(tmp_path)
    assert found["same"].unchanged and found["same-again"].unchanged and not found["other"].unchanged
    assert "its rules equal its base rfd+2.4.0's" in found["same"].unchanged_line()
    assert not any(v.unchanged for v in VARIANTS.values())  # the rule sets' own files are the references


# --- proposals and their flags in a variant file (a proposal made here, beside the registry's own) ---


@pytest.fixture
def inject(monkeypatch):
    """A proposal ``pending-inject`` with two flags, registered for the test only."""
    from acp_lifecycle.model import proposals as registry
    from acp_lifecycle.model.proposals import Document, Flag, Proposal

    p = Proposal("pending-inject", "Pending injects", Document("session-inject", "rfds/session-inject.mdx", "r1"),
                 "prompts queued for a session", flags=(
                     Flag("injects_survive_cancel", ("no", "yes", "later"), "no", "what session/cancel does to them"),
                     Flag("inject_depth", (1, 2), 1, "how many may wait")))
    monkeypatch.setitem(registry.PROPOSALS, p.name, p)
    return p


def test_a_variant_enables_a_proposal_and_sets_its_flags(tmp_path, inject):
    from acp_lifecycle.model.config import S240_RULES
    from acp_lifecycle.model.variants import load_variants

    _write(tmp_path, "inject", "rfd+2.4.0", 'proposals = ["pending-inject"]\n[changes]\n'
           'injects_survive_cancel = "yes"\ninject_depth = 1\ncancel_rejects_held = "may"\n')
    _write(tmp_path, "inject-later", "inject", '[changes]\ninjects_survive_cancel = "later"\ninject_depth = 2\n')
    _write(tmp_path, "inject-back", "inject", '[changes]\ninjects_survive_cancel = "no"\n')
    found = load_variants(tmp_path)
    r = found["inject"].rules
    # the flag at its default is no change: the rules carry the others only
    assert r == S240_RULES.with_(name="inject", cancel_rejects_held="may", proposals=("pending-inject",),
                                 flags=(("injects_survive_cancel", "yes"),))
    assert r.flag("injects_survive_cancel") == "yes" and r.flag("inject_depth", 1) == 1
    # the base enables it: its flags may be set without enabling it again
    assert found["inject-later"].rules.flags == (("inject_depth", 2), ("injects_survive_cancel", "later"))
    # set back to the default: no flag is left, and the rules are not the base's
    assert found["inject-back"].rules.flags == () and not found["inject-back"].unchanged


@pytest.mark.parametrize("body, error", [
    ('proposals = ["pending-inject"]\n[changes]\ninjects_survive_cancel = "maybe"\n',
     '[changes] injects_survive_cancel = "maybe" is not allowed; choose one of: "no", "yes", "later"'),
    ('proposals = ["pending-inject"]\n[changes]\ninject_depth = true\n',
     "inject_depth = true is not allowed; choose one of: 1, 2"),
    ('[changes]\ninjects_survive_cancel = "yes"\n',
     "injects_survive_cancel is no Rules field a variant may change (model/config.py) but a flag of proposal "
     "'pending-inject', which it does not enable: add proposals = [\"pending-inject\"]"),
    ('proposals = ["pending-inject"]\n[changes]\ninjects_survive = "yes"\n',
     "nor a flag of its proposals; did you mean injects_survive_cancel?"),
    ('proposals = ["pending-inject", "nope"]\n', "proposals: unknown proposal 'nope'; the proposals: "),
])
def test_a_bad_proposal_or_flag_is_one_line_naming_the_allowed_values(tmp_path, inject, body, error):
    from acp_lifecycle.model.variants import VariantError, load_variants

    _write(tmp_path, "x", "rfd", body)
    with pytest.raises(VariantError) as e:
        load_variants(tmp_path)
    assert str(e.value).startswith("x.toml: ") and error in str(e.value) and "\n" not in str(e.value), str(e.value)


# --- class flips --------------------------------------------------------------------------------


def test_a_known_limitation_that_holds_under_a_variant_is_flagged():
    from acp_lifecycle.sims.variants import class_flips

    flips = {f["property"]: f for f in class_flips(AGREED)["empty-prompt-response"]}
    f = flips["lost_response_recoverable"]
    assert (f["class"], f["was"], f["now"], f["expected"]) == ("known_limitation", "violated", "holds", False)
    assert flips["sometimes_echo_after_response"]["flip"] == "a sometimes is never reached"
    # declared by the variant's file: flagged, and marked as expected
    assert [f["expected"] for f in class_flips(AGREED)["client-correlation-token"]] == [True]
    assert "## Class flips" in (DOCS / "verdicts.md").read_text()


def test_regress_flags_class_flips_in_text_and_json(capsys):
    argv = ["regress", "--verdicts", str(DOCS / "verdicts.json"), "--variant", "empty-prompt-response"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())  # wrapped at 80 columns
    assert "CLASS FLIP empty-prompt-response / lost_response_recoverable: a known limitation now holds" in out
    assert main(argv + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "lost_response_recoverable" in [f["property"] for f in data["flips"]["empty-prompt-response"]]

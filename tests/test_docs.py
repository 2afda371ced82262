"""Generated docs match the code, and every clause is checked or explained."""

from pathlib import Path

from acp_lifecycle.model.clauses import CITATIONS, CLAUSES
from acp_lifecycle.model.properties import PROPERTIES
from acp_lifecycle.sims.docsgen import GENERATED

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_generated_docs_are_up_to_date():
    for name, make in GENERATED.items():
        assert (DOCS / name).read_text() == make(), f"docs/{name} is stale: run `acp-lifecycle docs`"


def test_every_must_clause_is_a_property_or_out_of_scope_with_a_reason():
    cited = {c for cids in CITATIONS.values() for c in cids}
    for c in CLAUSES.values():
        assert (c.id in cited) != bool(c.out_of_scope), c.id


def test_every_property_cites_a_clause_and_every_citation_is_a_property():
    # every rule cites a clause; a witness cites the permission (MAY) it shows the model uses
    ids = {p.id for p in PROPERTIES if p.kind != "sometimes"}
    witnesses = {p.id for p in PROPERTIES if p.kind == "sometimes"}
    assert ids <= set(CITATIONS) <= ids | witnesses
    assert all(CITATIONS[i] for i in CITATIONS)


def test_the_readme_points_at_the_docs():
    readme = (DOCS.parent / "README.md").read_text()
    for name in ("docs/model.md", "docs/clauses.md", "docs/bugs.md", "docs/findings.md", "docs/verdicts.md"):
        assert name in readme


def test_the_findings_name_real_scenarios_properties_and_variants():
    import re

    from acp_lifecycle.model.properties import BY_ID
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.scenarios import SCENARIOS

    text = (DOCS / "findings.md").read_text()
    for name in re.findall(r"acp-lifecycle scenario ([a-z0-9-]+)", text):
        assert name in SCENARIOS, name
    for pid in re.findall(r"`([a-z_]+)`", text):
        if pid.count("_") >= 2 and pid not in ("max_turn_requests",):
            assert pid in BY_ID, pid
    for name in re.findall(r"variant `([a-z0-9+.-]+)`", text):
        assert name in VARIANTS, name


def test_the_readmes_test_command_sets_up_what_ci_sets_up():
    """A newcomer's run of the README's test command had 15 live tests skipped for npm packages only
    `.ci/run` installed, and 2 for dask: one script installs them, and both call it."""
    root = DOCS.parent
    assert ".ci/setup && .venv/bin/python -m pytest\n" in (root / "README.md").read_text()
    run = (root / ".ci" / "run").read_text().splitlines()
    setup = (root / ".ci" / "setup").read_text()
    assert ".ci/setup" in run and run.index(".ci/setup") < next(i for i, ln in enumerate(run) if "pytest" in ln)
    assert "'.[test,dask]'" in setup and "agent-client-protocol==" in setup and "chromium-driver" in setup
    gens = sorted(str(p.parent.relative_to(root)) for p in (root / "tests").glob("*/gen/package-lock.json"))
    assert gens and all(g in setup for g in gens), gens
    assert "-rs" in (root / "pyproject.toml").read_text()  # every skip is printed with its reason

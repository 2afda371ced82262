"""The official v2 schema (@agentclientprotocol/sdk@2.4.0): pulled, pinned, and what it says
about the RFD's examples, known-invalid messages and every message the model renders.

These tests need the schema. The session fixture uses ``$ACP_LIFECYCLE_SCHEMA`` (a path to
the pinned schema.json) when it is set, else the session's own cache, which tests/conftest.py
seeds from the copies committed in tests/schema/ (checked against the pin): no network. The
tests of ``pull()`` run npm's own client against a registry of their own on 127.0.0.1 (a
tarball built here, its integrity pinned for the test), so npm's fetch, the integrity checks
and the extraction are exercised offline; the one test that fetches the real package from the
npm registry is marked ``slow``. The npm tests are skipped only when npm is not installed or
``$ACP_LIFECYCLE_SCHEMA`` is set (the developer said: use this file, do not fetch).
"""

from __future__ import annotations

import gzip
import http.server
import io
import json
import os
import shutil
import tarfile
import threading
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import acp_lifecycle.sims.wire.schema as schema
import acp_lifecycle.sims.wire.schema_source as schema_source
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.model.wire import step_messages
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.wire.schema import (
    PACKAGE,
    PACKAGE_INTEGRITY,
    SCHEMA_INTEGRITY,
    SchemaError,
    Validator,
    cache_path,
    locate,
    pull,
    sri,
    step_problems,
    validate_model,
)

VECTORS = Path(__file__).resolve().parent / "vectors"
ENV = "ACP_LIFECYCLE_SCHEMA"
OWN_SCHEMA = bool(os.environ.get(ENV))
needs_npm = pytest.mark.skipif(OWN_SCHEMA or shutil.which("npm") is None,
                               reason=f"${ENV} is set: the schema is given, npm is not run" if OWN_SCHEMA
                               else "npm is not installed: these tests run it")

def _load(name: str) -> list[dict]:
    return json.loads((VECTORS / name).read_text())


@pytest.fixture(scope="session")
def schema_path() -> Path:
    given = os.environ.get(ENV)
    try:
        path = locate(given)  # None: the session's cache, seeded from tests/schema/
    except SchemaError as e:
        pytest.fail(f"the v2 schema is needed and could not be had: {e} (or set ${ENV} to the pinned schema.json)")
    if sri(path.read_bytes()) != SCHEMA_INTEGRITY:
        pytest.fail(f"{path} is not the pinned schema/v2/schema.json of @agentclientprotocol/sdk@2.4.0")
    return path


@pytest.fixture(scope="session")
def validator(schema_path) -> Validator:
    return Validator(schema_path)


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert text and "\n" not in text, text
    return text


# ---------------------------------------------------------------------------
# The RFD's examples and the known cases


def test_every_json_example_of_the_rfd_is_valid_against_the_official_schema(validator):
    vectors = _load("rfd-examples.json")
    assert len(vectors) == 9
    requests: dict = {}  # (sender, id) -> method
    for v in vectors:
        msg, sender = v["msg"], v["from"]
        method = None
        if "method" in msg:
            if "id" in msg:
                requests[(sender, msg["id"])] = msg["method"]
        else:
            other = "agent" if sender == "client" else "client"
            method = requests[(other, msg["id"])]
            assert method == "session/prompt"
        assert validator.check(msg, sender, method) == [], v["name"]


def test_each_known_invalid_message_is_rejected_with_a_precise_problem(validator):
    for v in _load("invalid.json"):
        problems = validator.check(v["msg"], v["from"], v.get("request_method"))
        assert any(v["expect"] in p for p in problems), (v["name"], problems)


def test_the_six_invalid_cases_the_brief_names_are_among_the_known_invalid_vectors(validator):
    names = {v["name"] for v in _load("invalid.json")}
    for case in ("({})", "messageId null", "error has no code", "chunk without messageId", "(bogus)", "beside stopReason end_turn"):
        assert any(case in n for n in names), case


def test_edge_cases_the_schema_and_rfd_allow_are_accepted(validator):
    for v in _load("valid-edge-cases.json"):
        assert validator.check(v["msg"], v["from"], v.get("request_method")) == [], v["name"]


def test_a_custom_stop_reason_needs_the_underscore_prefix_and_the_schema_alone_cannot_say_so(validator, schema_path):
    update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "bogus"}
    plain = _plain(schema_path, "SessionUpdate")
    assert plain.is_valid(update)  # the schema's "other" branch takes any string
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    (problem,) = validator.check(msg, "agent")
    assert problem.startswith('params.update.stopReason: "bogus" is not a value the schema lists (end_turn, ')
    update["stopReason"] = "_bogus"
    assert validator.check(msg, "agent") == []


def test_an_error_beside_another_stop_reason_is_valid_schema_but_a_problem_here(validator, schema_path):
    update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled", "error": {"code": -32000, "message": "x"}}
    assert _plain(schema_path, "SessionUpdate").is_valid(update)
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    (problem,) = validator.check(msg, "agent")
    assert 'allowed only beside stopReason "error"' in problem and '"cancelled"' in problem


def test_a_response_is_checked_against_the_response_of_the_method_it_answers(validator):
    resume_ok = {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert validator.check(resume_ok, "agent", "session/resume") == []
    assert validator.check(resume_ok, "agent", "session/prompt") == ["result: 'messageId' is a required property (schema #/$defs/PromptResponse/required)"]
    # without the request's method only the envelope is checked
    assert validator.check(resume_ok, "agent") == []
    assert validator.check(resume_ok, "client", "session/prompt") == ["result: session/prompt is answered by the agent, not the client"]


def test_problems_say_where_in_the_message_and_where_in_the_schema(validator):
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "user_message", "messageId": "m", "content": [{"type": "text"}]}}}
    assert validator.check(msg, "agent") == ["params.update.content[0]: 'text' is a required property (schema #/$defs/TextContent/required)"]


def test_the_method_tables_follow_the_schemas_x_method_and_x_side_annotations(validator):
    # x-side names the side that handles the method: it receives the request or
    # notification and sends the response; "protocol" methods go both ways.
    other = {"client": "agent", "agent": "client"}
    seen = 0
    for name, d in validator.defs.items():
        method, side = d.get("x-method"), d.get("x-side")
        if not method:
            continue
        seen += 1
        if name.endswith("Response"):
            assert validator.methods(side, "response")[method] == name
            continue
        kind = "notification" if name.endswith("Notification") else "request"
        senders = ("client", "agent") if side == "protocol" else (other[side],)
        for sender in senders:
            assert validator.methods(sender, kind)[method] == name, (name, sender, kind)
    assert seen == 32
    assert validator.methods("client", "request")["session/prompt"] == "PromptRequest"
    assert validator.methods("agent", "response")["session/prompt"] == "PromptResponse"
    assert validator.methods("agent", "notification")["session/update"] == "UpdateSessionNotification"


def _plain(schema_path: Path, name: str) -> Draft202012Validator:
    """The unmodified schema under jsonschema's own 2020-12 validator."""
    doc = json.loads(schema_path.read_text())
    uri = "urn:test:acp-v2"
    registry = Registry().with_resource(uri, Resource.from_contents(doc, default_specification=DRAFT202012))
    return Draft202012Validator({"$ref": f"{uri}#/$defs/{name}"}, registry=registry)


def test_dispatching_tagged_unions_on_their_tag_gives_the_plain_validators_verdicts(validator, schema_path):
    samples = []
    for file in ("rfd-examples.json", "invalid.json", "valid-edge-cases.json"):
        for v in _load(file):
            samples.append((v["msg"], v["from"], v.get("request_method")))
    distinct = {}
    for member in ("failures", "permission"):
        for m, s, r in _model_messages(member):
            distinct.setdefault(json.dumps([m, s, r], sort_keys=True), (m, s, r))
    samples += distinct.values()
    plain: dict = {}
    compared = 0
    for msg, sender, method in samples:
        kind = "response" if "method" not in msg else ("request" if "id" in msg else "notification")
        key = method if kind == "response" else msg.get("method")
        name = validator.methods(sender, kind).get(key) if key else None
        part = msg.get("result") if kind == "response" else msg.get("params")
        if name is None or part is None:
            continue
        if name not in plain:
            plain[name] = _plain(schema_path, name)
        assert validator._validator(name).is_valid(part) == plain[name].is_valid(part), (name, part)
        compared += 1
    assert compared > 30


# ---------------------------------------------------------------------------
# Every message the model renders


def _model_messages(member: str):
    cfg = get_suite(member).members[0]
    s0 = initial_state(cfg)
    seen, frontier = {s0}, [s0]
    while frontier:
        nxt = []
        for pre in frontier:
            for step in successors(pre, cfg, RFD_RULES):
                for direction, client, msg in step_messages(pre, step):
                    sender = "client" if direction.endswith("->agent") else "agent"
                    method = None if "method" in msg else schema._request_method(pre, step, client, msg)
                    yield msg, sender, method
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
        frontier = nxt


def test_every_message_of_every_step_of_the_tiny_member_is_valid(validator):
    result = validate_model(validator, get_suite("tiny").members[0], RFD_RULES)
    assert result.states == 216 and result.messages > 370
    assert result.problems == {}


@pytest.mark.parametrize("member", ["tiny", "failures", "lost-response", "permission", "cancel-race", "import"])
def test_every_message_the_model_renders_is_valid(validator, member):
    result = validate_model(validator, get_suite(member).members[0], RFD_RULES)
    assert result.messages > 100
    assert result.problems == {}, "\n".join(f"{p}\n    {ex[0]} {json.dumps(ex[3])}" for p, ex in result.problems.items())


def test_every_model_response_maps_back_to_the_request_it_answers():
    for member in ("failures", "lost-response", "permission"):
        methods = {m for msg, _, m in _model_messages(member) if "method" not in msg}
        assert None not in methods
        assert methods <= {"session/prompt", "session/resume", "session/request_permission"}


def test_step_problems_name_the_step_message_and_problem(validator):
    cfg = get_suite("permission").members[0]
    s0 = initial_state(cfg)
    frontier, seen = [s0], {s0}
    while frontier:
        pre = frontier.pop(0)
        for step in successors(pre, cfg, RFD_RULES):
            if step.action[0] == "AgentRequestPermission":
                assert step_problems(validator, pre, step) == []
                broken = step._replace(emitted=tuple(
                    (c, ("perm_broken",)) if m[0] == "perm" else (c, m) for c, m in step.emitted))
                import acp_lifecycle.model.wire as wire

                original = wire.agent_message

                def render(m):
                    if m[0] == "perm_broken":
                        out = original(("perm", 1))
                        del out["params"]["title"]
                        return out
                    return original(m)

                wire.agent_message = render
                try:
                    problems = step_problems(validator, pre, broken)
                finally:
                    wire.agent_message = original
                ((direction, client, msg, problem),) = problems
                assert direction == "agent->client" and client == 0
                assert msg["method"] == "session/request_permission"
                assert "'title' is a required property" in problem
                return
            if step.state not in seen:
                seen.add(step.state)
                frontier.append(step.state)
    pytest.fail("no AgentRequestPermission step")


def test_the_schema_layer_catches_the_seeded_error_beside_end_turn_bug(validator):
    from acp_lifecycle.model.bugs import get_bug

    bug = get_bug("error-beside-end-turn")
    result = validate_model(validator, get_suite(bug.member).members[0], bug.rules)
    assert any('allowed only beside stopReason "error"' in p for p in result.problems)


# ---------------------------------------------------------------------------
# Pulling, caching, locating


def _no_npm(monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def test_the_pinned_integrity_is_an_sri_sha512_string():
    assert PACKAGE_INTEGRITY == "sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ+4l+Wg=="
    assert SCHEMA_INTEGRITY.startswith("sha512-") and len(SCHEMA_INTEGRITY) == 95


def test_the_cache_lives_under_xdg_cache_home_or_the_home_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_path() == tmp_path / "acp-lifecycle" / "sdk-2.4.0" / "schema.json"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_path() == Path.home() / ".cache" / "acp-lifecycle" / "sdk-2.4.0" / "schema.json"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as the XDG spec says
    assert cache_path() == Path.home() / ".cache" / "acp-lifecycle" / "sdk-2.4.0" / "schema.json"


def test_pull_reuses_a_verified_cached_copy_without_running_npm(monkeypatch, tmp_path, schema_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copyfile(schema_path, cache / "schema.json")
    before = (cache / "schema.json").stat()
    _no_npm(monkeypatch, tmp_path)
    for _ in range(2):
        assert pull(cache) == cache / "schema.json"
    after = (cache / "schema.json").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def _tarball(files: dict[str, bytes]) -> bytes:
    """A gzipped npm tarball holding ``files`` under package/ (fixed mtimes: the same bytes every time)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in {"package.json": json.dumps({"name": PACKAGE, "version": "2.4.0"}).encode(), **files}.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def local_registry(monkeypatch, tmp_path):
    """An npm registry of the test's own on 127.0.0.1 serving one tarball of @agentclientprotocol/sdk@2.4.0
    (the committed schemas in it), with npm's cache in tmp_path. Yields a function that sets the tarball's
    bytes (default: that package) and returns them."""
    from conftest import committed_schema

    served: dict[str, bytes] = {}

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path.endswith(".tgz"):
                body, kind = served["tgz"], "application/octet-stream"
            else:  # the packument, whatever the path's escaping of the scope
                dist = {"tarball": f"{base}/@agentclientprotocol/sdk/-/sdk-2.4.0.tgz", "integrity": sri(served["tgz"])}
                body = json.dumps({"name": PACKAGE, "dist-tags": {"latest": "2.4.0"},
                                   "versions": {"2.4.0": {"name": PACKAGE, "version": "2.4.0", "dist": dist}}}).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "npm_config_proxy", "npm_config_https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{server.server_address[1]}/")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_fetch_retries", "0")

    def serve(tgz: bytes | None = None) -> bytes:
        served["tgz"] = tgz if tgz is not None else _tarball({
            "schema/v2/schema.json": committed_schema("v2").read_bytes(),
            "schema/v1/schema.json": committed_schema("v1").read_bytes()})
        return served["tgz"]

    try:
        yield serve
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@needs_npm
def test_pull_fetches_with_npm_replaces_a_corrupted_copy_and_then_reuses_it(monkeypatch, tmp_path, local_registry):
    monkeypatch.setattr(schema_source, "PACKAGE_INTEGRITY", sri(local_registry()))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "schema.json").write_text('{"corrupted": true}')
    path = pull(cache)
    assert path == cache / "schema.json"
    assert sri(path.read_bytes()) == SCHEMA_INTEGRITY
    assert sorted(p.name for p in cache.iterdir()) == ["schema.json"]  # only the one file, no temp left
    assert sri(pull(cache, version="v1").read_bytes()) == schema_source.SCHEMA_V1_INTEGRITY
    first = path.stat()
    _no_npm(monkeypatch, tmp_path)
    assert pull(cache) == path
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)


@needs_npm
def test_pull_refuses_a_tarball_that_does_not_match_the_pinned_integrity(tmp_path, local_registry):
    local_registry()  # the right schema inside, but not the pinned package's bytes
    cache = tmp_path / "cache"
    with pytest.raises(SchemaError) as e:
        pull(cache)
    text = _one_line(e.value)
    assert text.startswith("integrity mismatch for @agentclientprotocol/sdk@2.4.0") and "refusing it" in text
    assert "the registry served a different package" in text
    assert not (cache / "schema.json").exists()


@needs_npm
def test_pull_refuses_a_package_whose_schema_is_not_the_pinned_file(monkeypatch, tmp_path, local_registry):
    tgz = local_registry(_tarball({"schema/v2/schema.json": b'{"not": "the schema"}'}))
    monkeypatch.setattr(schema_source, "PACKAGE_INTEGRITY", sri(tgz))
    with pytest.raises(SchemaError) as e:
        pull(tmp_path / "cache")
    assert _one_line(e.value).startswith("integrity mismatch for package/schema/v2/schema.json")
    assert not (tmp_path / "cache" / "schema.json").exists()


@needs_npm
@pytest.mark.slow
def test_pull_fetches_the_real_package_from_the_npm_registry(monkeypatch, tmp_path):
    """The one test that needs the network: the pinned integrity is what the registry serves."""
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    assert sri(pull(tmp_path / "cache").read_bytes()) == SCHEMA_INTEGRITY


def test_the_committed_schemas_are_the_pinned_files():
    from conftest import committed_schema

    for version, integrity in (("v2", SCHEMA_INTEGRITY), ("v1", schema_source.SCHEMA_V1_INTEGRITY)):
        assert sri(committed_schema(version).read_bytes()) == integrity


def test_pull_without_npm_says_to_install_it_or_pass_schema(monkeypatch, tmp_path):
    _no_npm(monkeypatch, tmp_path)
    with pytest.raises(SchemaError) as e:
        pull(tmp_path / "cache")
    text = _one_line(e.value)
    assert text.startswith("npm not found on PATH") and "--schema PATH" in text


@needs_npm
def test_pull_with_the_registry_unreachable_says_there_is_no_network(monkeypatch, tmp_path):
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "npm_config_proxy", "npm_config_https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SchemaError) as e:
        pull(tmp_path / "cache")
    text = _one_line(e.value)
    assert "no network access to the npm registry (ECONNREFUSED" in text and "--schema PATH" in text


def test_locate_refuses_a_corrupted_cached_copy_with_one_line(tmp_path, schema_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / "schema.json"
    data = schema_path.read_bytes()
    for corrupt, what in ((data[: len(data) // 2], "it is not JSON and its sha512 does not match"), (b"{}", "its sha512 does not match")):
        target.write_bytes(corrupt)
        with pytest.raises(SchemaError) as e:
            locate(cache_dir=cache)
        text = _one_line(e.value)
        assert f"the cached schema {target} is corrupted ({what}" in text
        assert text.endswith("run `acp-lifecycle schema pull` to fetch it again")
    target.write_bytes(data)
    assert locate(cache_dir=cache) == target


def test_locate_without_a_schema_says_to_pull_or_pass_one(tmp_path):
    with pytest.raises(SchemaError) as e:
        locate(cache_dir=tmp_path / "nothing-here")
    assert _one_line(e.value) == "no v2 schema: run `acp-lifecycle schema pull` or pass --schema PATH"


def test_locate_takes_a_schema_path_that_exists_and_is_json(tmp_path, schema_path):
    assert locate(schema_path) == schema_path
    with pytest.raises(SchemaError) as e:
        locate(tmp_path / "missing.json")
    assert _one_line(e.value).endswith("missing.json: no such file")
    bad = tmp_path / "bad.json"
    bad.write_text("not json\nat all")
    with pytest.raises(SchemaError) as e:
        locate(bad)
    assert "not JSON" in _one_line(e.value)


def test_a_json_file_that_is_not_the_acp_schema_is_refused_by_the_validator(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"type": "object"}')
    with pytest.raises(SchemaError) as e:
        Validator(other)
    assert "not an ACP JSON schema" in _one_line(e.value)


def test_the_pulled_schema_is_marked_as_the_pinned_file(validator):
    assert validator.pinned

"""The catalogue of error codes (``service/api/problems.json``, served at ``/problems``) is
held to the source: every code the service, its server or its proxy can answer is in it,
and nothing else; every rule is; every entry is served, as HTML and JSON; a real problem's
``type`` resolves to its entry; and every example has the Problem schema's shape."""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from jsonschema import Draft202012Validator

from service import serving
from service.api import create_app
from service.api.errors import HTTP_CODES, TITLES
from service.api.openapi import examples, spec_dict
from service.api.problems import by_code, catalogue
from service.api.web import PROXY_ERRORS
from service.store import EventStore

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
NGINX = ROOT / "deploy" / "nginx.conf"
PROBLEM = "application/problem+json"
BASE_MEMBERS = {"type", "title", "status", "code", "detail"}

#: Where a problem's code is said as a literal: the call and the argument's position.
CODE_ARGUMENT = {"Problem": 1, "CommandError": 1, "JwtRefused": 0, "RecordError": 0}
#: Where an illegal move's or a refused event's rule is said.
RULE_ARGUMENT = {"IllegalMoveError": 0, "ReplayError": 1}
#: Tables of codes (status -> code, or -> (code, detail...)) and of rules, by their names' ends.
TABLES = ("_CODES", "_ERRORS", "_PROBLEMS", "REFUSALS")
#: The places a code is passed on rather than said, and where the codes they pass come from
#: (all found by the scan elsewhere).  A new one must be added here, once its codes are found.
PASSED_ON = {
    ("service/api/errors.py", "error.code"): "an ApplicationError's code (its class's, or code=)",
    ("service/api/errors.py", "err.code"): "a CommandError's code",
    ("service/api/errors.py", "code"): "HTTP_CODES, or http_error",
    ("service/api/web.py", "name"): "PROXY_ERRORS, HTTP_CODES, or proxy_error",
    ("service/application/errors.py", "code"): "Unauthorized passes its code= on",
    ("service/application/records.py", "error.code"): "a RecordError's code",
    ("service/application/signin.py", "code"): "a JwtRefused's code",
}
#: Codes in the source that no answer carries, and why.
NEVER_ANSWERED = {
    "engine_error": "the base class of the engine's errors: each one raised has a code of its own",
    "unavailable": "the base class of the 503 refusals: each one raised has a code of its own (busy, shutting_down)",
}


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _table_codes(value: ast.AST) -> list[str]:
    """The codes of a table: its values (a dict's), each a code or a tuple led by one."""
    items = value.values if isinstance(value, ast.Dict) else value.elts if isinstance(value, (ast.Tuple, ast.List)) else []
    found = []
    for item in items:
        if isinstance(item, ast.Tuple) and item.elts:
            item = item.elts[0]
        if (code := _literal(item)) is not None:
            found.append(code)
    return found


class Scan:
    """What the service's source says of codes and rules, statically (ast)."""

    def __init__(self, root: Path = SERVICE):
        self.codes: dict[str, set[str]] = defaultdict(set)
        self.engine_rules: set[str] = set()
        self.replay_rules: set[str] = set()
        self.record_rules: set[tuple[str, str]] = set()  # (code, rule) of a refused record
        self.other_rules: set[str] = set()  # rule= anywhere else
        self.passed_on: set[tuple[str, str]] = set()
        for path in sorted(root.rglob("*.py")):
            self.read(str(path.relative_to(root.parent)), ast.parse(path.read_text()))

    def read(self, where: str, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.call(where, node)
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and any(_name(t) == "code" for t in statement.targets):
                        if (code := _literal(statement.value)) is not None:
                            self.codes[code].add(f"{where}: class {node.name}")
            elif isinstance(node, ast.Assign) and any((_name(t) or "").endswith(TABLES) for t in node.targets):
                for code in _table_codes(node.value):
                    self.codes[code].add(f"{where}: table")
            elif isinstance(node, ast.Assign) and any(_name(t) == "RULE_OF_FIELD" for t in node.targets):
                self.replay_rules.update(_table_codes(node.value))

    def call(self, where: str, node: ast.Call) -> None:
        name = _name(node.func)
        position = CODE_ARGUMENT.get(name or "")
        if position is not None and len(node.args) > position:
            argument = node.args[position]
            if (code := _literal(argument)) is not None:
                self.codes[code].add(f"{where}:{node.lineno} {name}")
            else:
                self.passed_on.add((where, ast.unparse(argument)))
        for keyword in node.keywords:
            if keyword.arg == "code":
                if (code := _literal(keyword.value)) is not None:
                    self.codes[code].add(f"{where}:{node.lineno} code=")
                else:
                    self.passed_on.add((where, ast.unparse(keyword.value)))
            if keyword.arg == "rule" and (rule := _literal(keyword.value)) is not None:
                code = _literal(node.args[0]) if name == "RecordError" and node.args else None
                if code is not None:
                    self.record_rules.add((code, rule))
                    self.replay_rules.add(rule)
                else:
                    self.other_rules.add(rule)
        position = RULE_ARGUMENT.get(name or "")
        if position is not None and len(node.args) > position and (rule := _literal(node.args[position])) is not None:
            (self.engine_rules if name == "IllegalMoveError" else self.replay_rules).add(rule)
        # A table's fallback: HTTP_CODES.get(status, "http_error"), RULE_OF_FIELD.get(key, "does_not_follow").
        if name == "get" and isinstance(node.func, ast.Attribute) and len(node.args) == 2:
            table = _name(node.func.value) or ""
            fallback = node.args[1]
            if isinstance(fallback, ast.Tuple) and fallback.elts:
                fallback = fallback.elts[0]
            if (code := _literal(fallback)) is not None and table.endswith(TABLES):
                self.codes[code].add(f"{where}:{node.lineno} {table} fallback")
            elif code is not None and table == "RULE_OF_FIELD":
                self.replay_rules.add(code)


@pytest.fixture(scope="module")
def scan() -> Scan:
    return Scan()


def nginx_codes() -> set[str]:
    return set(re.findall(r'\\?"code\\?": \\?"(\w+)', NGINX.read_text()))


# --- (a) every code answered is catalogued, and only those ---------------------------------


def test_the_scan_finds_codes_of_every_kind(scan):
    """The scan itself: a code said each way is found (so that the next test can fail)."""
    sample = Scan(root=Path(__file__).parent / "nowhere")  # no files: nothing found
    assert not sample.codes
    sample.read("x.py", ast.parse(
        'raise Problem(400, "a_said", "x")\nraise Invalid("x", code="b_said")\nclass E(Exception):\n    code = "c_said"\n'
        'raise RecordError("d_said", "x", rule="r_said")\nX_CODES = {1: "e_said", 2: ("f_said", "x")}\ny = X_CODES.get(3, "g_said")\n'
    ))
    assert set(sample.codes) == {"a_said", "b_said", "c_said", "d_said", "e_said", "f_said", "g_said"}
    assert sample.record_rules == {("d_said", "r_said")}
    assert {"illegal_move", "invalid_request", "rate_limited", "body_too_large", "http_error", "proxy_error",
            "uri_too_long", "invalid_seats", "token_expired", "digest_mismatch"} <= set(scan.codes)


def test_codes_are_passed_on_only_where_their_sources_are_known(scan):
    unknown = scan.passed_on - set(PASSED_ON)
    assert not unknown, f"a code passed on from somewhere new: find its codes, then add it to PASSED_ON: {sorted(unknown)}"
    assert set(PASSED_ON) <= scan.passed_on, f"stale in PASSED_ON: {sorted(set(PASSED_ON) - scan.passed_on)}"


def test_every_code_raised_is_in_the_catalogue_and_every_catalogued_code_is_raised(scan):
    answered = (set(scan.codes) | nginx_codes()) - set(NEVER_ANSWERED)
    catalogued = set(by_code())
    missing = {code: sorted(scan.codes.get(code, {"deploy/nginx.conf"})) for code in answered - catalogued}
    assert not missing, f"codes without an entry in service/api/problems.json: {json.dumps(missing, indent=1)}"
    assert not catalogued - answered, f"catalogued, but raised nowhere: {sorted(catalogued - answered)}"
    assert set(NEVER_ANSWERED) <= set(scan.codes), "NEVER_ANSWERED names a code the source no longer has"
    assert not set(NEVER_ANSWERED) & catalogued


def test_who_answers_each_code_is_said_as_the_source_says(scan):
    entries = by_code()
    for code, *_ in serving.SERVER_PROBLEMS.values():
        assert "server" in entries[code]["answered_by"], code
    for code in {code for code, *_ in PROXY_ERRORS.values()} | nginx_codes() | {"proxy_error"}:
        assert "proxy" in entries[code]["answered_by"], code
    for code in set(scan.codes) - set(NEVER_ANSWERED):
        # (web.py answers for an ingress: X-Code, the proxy's status)
        in_app = any(not place.startswith(("service/serving.py", "service/api/web.py")) for place in scan.codes[code])
        assert not in_app or "service" in entries[code]["answered_by"], code


def test_a_proxy_and_a_server_answer_the_catalogues_statuses():
    entries = by_code()
    for status, (code, *_) in [*serving.SERVER_PROBLEMS.items(), *PROXY_ERRORS.items()]:
        assert status in entries[code]["status"], (code, status)
    for status, code in HTTP_CODES.items():
        assert status in entries[code]["status"], (code, status)
    served = json.loads(serving.problem_answer(431, "Request Header Fields Too Large").partition(b"\r\n\r\n")[2])
    assert served["type"] == "/problems/headers_too_large"
    assert json.loads(serving.problem_answer(505, "HTTP Version Not Supported").partition(b"\r\n\r\n")[2])["code"] == "http_error"
    for body in re.findall(r"return \d+ '(\{.*\})\\n';", NGINX.read_text()):
        document = json.loads(body)
        assert document["type"] == "/problems/" + document["code"] and document["status"] in entries[document["code"]]["status"]


# --- (b) every rule ---------------------------------------------------------------------


def test_every_rule_of_the_engine_and_of_a_replay_is_listed(scan):
    rules = {rule["rule"]: rule for rule in catalogue()["rules"]}
    assert scan.engine_rules and scan.replay_rules
    said = scan.engine_rules | scan.replay_rules | scan.other_rules
    missing = said - set(rules)
    assert not missing, f"rules without an entry in service/api/problems.json: {sorted(missing)}"
    assert not set(rules) - said, f"listed, but in no rule of the source: {sorted(set(rules) - said)}"
    for rule in scan.engine_rules:  # an engine rule is an illegal move's, and a refused replay's
        assert {"illegal_move", "illegal_event"} <= set(rules[rule]["problems"]), rule
    for rule in scan.replay_rules - scan.engine_rules:
        assert "illegal_event" in rules[rule]["problems"], rule
    for code, rule in scan.record_rules:
        assert code in rules[rule]["problems"], (code, rule)
    assert all(set(rule["problems"]) <= set(by_code()) for rule in rules.values())


# --- (c) every entry is served ---------------------------------------------------------


@pytest.fixture(scope="module")
def catalogue_client():
    """An app without a database: the catalogue needs none."""
    return create_app({"STORE": EventStore(pool=None)}).test_client()


def test_every_code_is_served_as_json_and_as_html(catalogue_client):
    for code, entry in by_code().items():
        r = catalogue_client.get(f"/problems/{code}", headers={"Accept": "application/json"})
        assert r.status_code == 200 and r.mimetype == "application/json", code
        assert r.json["code"] == code and r.json["example"] == entry["example"] and r.json["href"] == f"/problems/{code}"
        assert r.headers["Vary"] == "Accept"
        page = catalogue_client.get(f"/problems/{code}", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert page.status_code == 200 and page.mimetype == "text/html", code
        text = page.get_data(as_text=True)
        assert f"<code>{code}</code>" in text and not re.search(r'(?:href|src)="https?:', text)  # nothing from elsewhere
    rules = catalogue_client.get("/problems/illegal_move").json["rules"]
    assert {"not_your_turn", "no_return", "knock_limit"} <= {rule["rule"] for rule in rules}


def test_the_index_lists_every_code_as_json_and_as_html(catalogue_client):
    body = catalogue_client.get("/problems").json  # no Accept: JSON
    assert [entry["code"] for entry in body["problems"]] == list(by_code())
    assert body["rules"] == catalogue()["rules"] and set(body["retry"]) == {e["retry"] for e in body["problems"]}
    page = catalogue_client.get("/problems", headers={"Accept": "text/html"})
    assert page.mimetype == "text/html"
    links = set(re.findall(r'href="problems/(\w+)"', page.get_data(as_text=True)))
    assert links == set(by_code())
    for asset in re.findall(r'href="(docs/[^"]+)"', page.get_data(as_text=True)):
        assert catalogue_client.get("/" + asset).status_code == 200, asset


def test_an_unknown_code_is_a_404_problem(catalogue_client):
    for accept in ("application/json", "text/html"):
        r = catalogue_client.get("/problems/no_such_code", headers={"Accept": accept})
        assert r.status_code == 404 and r.mimetype == PROBLEM and r.json["code"] == "not_found"
        assert "no_such_code" in r.json["detail"] and r.json["type"] == "/problems/not_found"


def test_the_api_reference_links_the_catalogue(catalogue_client):
    document = catalogue_client.get("/openapi.json").json
    assert "(/problems)" in document["info"]["description"]
    assert "/problems" in document["paths"]
    assert b'href="problems"' in catalogue_client.get("/docs").data


# --- (d) a real problem's type is its entry ---------------------------------------------


def test_a_real_problems_type_resolves_to_its_entry(client, new_match, operator):
    data, players = new_match()
    seat = players[0]
    view = seat.view()
    match = f"/matches/{data['id']}"
    answers = [
        client.get(f"/matches/{uuid.uuid4()}", headers=operator),
        client.get(f"/matches/{uuid.uuid4()}", headers=seat.headers),  # another match's: forbidden
        client.get(match),
        seat.act({"type": "discard", "card": view["hand"][0]}),  # illegal_move
        seat.act({"type": "draw"}),  # invalid_request
        seat.act({"type": "draw", "source": "stock"}, **{"If-Match": '"999"'}),  # version_mismatch
        client.post(f"{match}/actions", data="{", content_type="application/json", headers=seat.headers),
        client.post(f"{match}/actions", data="draw", content_type="text/plain", headers=seat.headers),
        client.get("/nowhere"),
        client.delete("/matches"),
    ]
    codes = set()
    for r in answers:
        assert r.status_code >= 400 and r.mimetype == PROBLEM, r.data[:200]
        problem = r.json
        url = urljoin(r.request.url, problem["type"])
        assert urlsplit(url).netloc == urlsplit(r.request.url).netloc, "the type is on the service that answered"
        entry = client.get(urlsplit(url).path, headers={"Accept": "application/json"})
        assert entry.status_code == 200 and entry.json["code"] == problem["code"], url
        assert problem["status"] in entry.json["status"]
        assert set(problem) - BASE_MEMBERS <= set(entry.json["members"]), f"{problem['code']}: a member the entry does not name"
        assert set(problem) == set(entry.json["example"]), f"{problem['code']}: the example's members differ from a real answer's"
        assert set(entry.json["headers"]) <= set(r.headers.keys()), problem["code"]
        codes.add(problem["code"])
    assert codes == {"match_not_found", "forbidden", "unauthorized", "illegal_move", "invalid_request", "version_mismatch",
                     "malformed_json", "unsupported_media_type", "not_found", "method_not_allowed"}


# --- (e) every example has the shape of the Problem schema ---------------------------------


@pytest.fixture(scope="module")
def problem_schema():
    document = spec_dict(create_app({"STORE": EventStore(pool=None)}))
    schema = document["components"]["schemas"]["Problem"]
    return schema, Draft202012Validator({**schema, "additionalProperties": False})


def test_every_example_is_a_problem_of_its_code_and_status(problem_schema):
    schema, validator = problem_schema
    whole = catalogue()
    for code, entry in by_code().items():
        example = entry["example"]
        errors = [error.message for error in validator.iter_errors(example)]
        assert not errors, (code, errors)
        assert set(schema["required"]) <= set(example) and BASE_MEMBERS <= set(example), code
        assert example["code"] == code and example["type"] == f"/problems/{code}", code
        assert example["status"] in entry["status"], code
        if "service" in entry["answered_by"] or example["status"] in TITLES:
            assert example["title"] == TITLES.get(example["status"], "Error"), code
        assert set(example) - BASE_MEMBERS <= set(entry["members"]), code
        assert entry["retry"] in whole["retry"] and entry["category"] in whole["categories"], code
        assert entry["answered_by"] and set(entry["answered_by"]) <= set(whole["answered_by"]), code
        assert set(entry["headers"]) <= {"Retry-After", "WWW-Authenticate", "ETag", "Allow"}, code
        assert all(400 <= status <= 599 for status in entry["status"]), code
        assert entry["title"] and entry["meaning"] and entry["action"], code


def test_the_recorded_answers_of_the_api_reference_agree_with_the_catalogue():
    """Each problem the examples' session really got (service/api/examples.json): its code
    is catalogued with its status and with the same members."""
    entries = by_code()
    seen = set()
    for operation, entry in examples().items():
        for status, by_media in entry["responses"].items():
            problem = by_media.get(PROBLEM)
            if problem is None:
                continue
            code = problem["code"]
            assert code in entries, (operation, code)
            assert int(status) in entries[code]["status"] and problem["type"] == f"/problems/{code}", (operation, code)
            assert BASE_MEMBERS <= set(problem) and set(problem) - BASE_MEMBERS <= set(entries[code]["members"]), (operation, code)
            seen.add(code)
    assert len(seen) > 10

"""The catalogue of error codes, served: ``GET /problems`` and ``GET /problems/{code}``.

Every problem document's ``type`` is ``/problems/{code}`` (``service.api.errors``), a
reference relative to the service (RFC 9457 resolves it against the request's URL): it
answers the code's entry, an HTML page for a browser and JSON for a client that asks
for ``application/json``.  The catalogue is one file, ``problems.json`` beside this
module: per code its statuses, a title, what it means, what a client should do (its
``retry``: one of ``RETRY``), who answers it (the service, the server in front of it, or
a proxy), the headers and members it adds, and an example body as the service answers it;
and the ``rule`` values of illegal moves and refused imports.  ``tests/api/test_problems.py``
holds it to the source: every code raised is in it, and nothing else.
"""

from __future__ import annotations

import functools
import html
import json
import re
from importlib import resources
from typing import Any

from flask import Blueprint, Response, jsonify, request
from marshmallow import Schema, fields

from . import schemas as s
from .docs import operation
from .errors import PROBLEM_BASE, Problem

bp = Blueprint("problems", __name__)


@functools.cache
def catalogue() -> dict[str, Any]:
    """The whole catalogue, as ``problems.json`` holds it."""
    return json.loads(resources.files("service.api").joinpath("problems.json").read_text())


@functools.cache
def by_code() -> dict[str, dict[str, Any]]:
    return {entry["code"]: entry for entry in catalogue()["problems"]}


def rules_of(code: str) -> list[dict[str, Any]]:
    """The ``rule`` values a problem of ``code`` may carry (illegal_move, illegal_event)."""
    return [rule for rule in catalogue()["rules"] if code in rule["problems"]]


def described(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as served: with its address, and the rules it may name."""
    code = entry["code"]
    more: dict[str, Any] = {"href": PROBLEM_BASE + code, "retry_meaning": catalogue()["retry"][entry["retry"]]}
    rules = rules_of(code)
    if rules:
        more["rules"] = rules
    return {**entry, **more}


# --- the answers' schemas, for the OpenAPI document -----------------------------------


class ProblemRuleSchema(Schema):
    rule = fields.String(required=True, metadata={"description": "The value of a problem's `rule` member."})
    meaning = fields.String(required=True)
    problems = fields.List(fields.String(), required=True, metadata={"description": "The codes whose problems may name it."})


class ProblemEntrySchema(Schema):
    code = fields.String(required=True)
    status = fields.List(fields.Integer(), required=True, metadata={"description": "The HTTP statuses it is answered with."})
    title = fields.String(required=True)
    category = fields.String(required=True)
    answered_by = fields.List(
        fields.String(), required=True, metadata={"description": "service, server (gunicorn, before the app), or proxy (nginx, an ingress)."}
    )
    operations = fields.List(fields.String(), required=True, metadata={"description": (
        "The operations (by operationId) that answer it for a reason of their own. The codes every request of a "
        "kind may meet (a body, a query, a token, a match id in the path, a rate limit) are not listed here: the "
        "API reference names every code each of its operations answers, per status (`x-problem-codes`)."
    )})
    meaning = fields.String(required=True)
    action = fields.String(required=True, metadata={"description": "What a client should do."})
    retry = fields.String(required=True, metadata={"description": "One of the catalogue's `retry` keys."})
    retry_meaning = fields.String(required=True)
    headers = fields.List(fields.String(), required=True, metadata={"description": "Headers the answer carries beside the body."})
    members = fields.List(fields.String(), required=True, metadata={"description": "Members of the body beyond type, title, status, code, detail."})
    example = fields.Nested(s.ProblemSchema, required=True)
    href = fields.String(required=True)
    rules = fields.List(fields.Nested(ProblemRuleSchema), metadata={"description": "The `rule` values it may carry."})


class ProblemCatalogueSchema(Schema):
    retry = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    categories = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    answered_by = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    problems = fields.List(fields.Nested(ProblemEntrySchema), required=True)
    rules = fields.List(fields.Nested(ProblemRuleSchema), required=True)


class HtmlPage(s.PlainText):
    content_type = "text/html"


# --- the routes -------------------------------------------------------------------------


def wants_html() -> bool:
    """HTML when the client prefers it to JSON (a browser); JSON otherwise (no Accept, */*)."""
    accept = request.accept_mimetypes
    return accept["text/html"] > accept["application/json"]


def answer(page: str, body: dict) -> Response:
    response = Response(page, mimetype="text/html") if wants_html() else jsonify(body)
    response.headers["Vary"] = "Accept"
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@bp.get("/problems")
@operation(
    summary="The catalogue of error codes",
    tags=["service"],
    responses={200: (ProblemCatalogueSchema, HtmlPage("the same as an HTML page (a browser's Accept)"))},
    auth=False,
    description=(
        "Every `code` a problem document may carry, with its statuses, what it means, what the client should do "
        "(`retry`), and an example; and every `rule` of an illegal move or a refused import. A problem's `type` "
        "(`/problems/{code}`, relative to the service) is its entry's page: `GET /problems/{code}` answers that "
        "entry, JSON or HTML as here. JSON unless the client prefers text/html."
    ),
)
def list_problems():
    whole = catalogue()
    body = {**whole, "problems": [described(entry) for entry in whole["problems"]]}
    return answer(index_page(), body)


@bp.get("/problems/<code>")
@operation(
    summary="One error code's entry in the catalogue",
    tags=["service"],
    responses={200: (ProblemEntrySchema, HtmlPage("the same as an HTML page (a browser's Accept)")), 404: s.ProblemSchema},
    auth=False,
    description=(
        "The entry of `code`: what a problem's `type` (`/problems/{code}`, relative to the service) names. JSON unless "
        "the client prefers text/html; 404 `not_found` for a code the catalogue does not hold."
    ),
)
def problem_entry(code: str):
    entry = by_code().get(code)
    if entry is None:
        raise Problem(404, "not_found", f"no error code {code!r} in the catalogue: GET /problems lists them")
    return answer(entry_page(entry), described(entry))


# --- the pages --------------------------------------------------------------------------

STYLE = """
  body { margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem; font: 15px/1.5 system-ui, sans-serif; color: #1f2937; }
  header { display: flex; gap: 1rem; align-items: baseline; border-bottom: 2px solid #14532d; margin-bottom: 1rem; }
  header h1 { font-size: 1.4rem; margin: .4rem 0; }
  header a { margin-left: .8rem; }
  header h1 + a { margin-left: auto; }
  a { color: #166534; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
  th, td { text-align: left; vertical-align: top; padding: .3rem .6rem; border-bottom: 1px solid #e5e7eb; }
  code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
  pre { background: #f3f4f6; padding: .8rem; overflow-x: auto; }
  dt { font-weight: 600; margin-top: .6rem; }
  dd { margin-left: 0; }
"""


def _markup(text: str, link: str = "") -> str:
    """Text with its `code` spans set as code; a span naming a catalogued code links to it
    (``link`` + the code: relative to the page)."""
    known = by_code()

    def span(match: re.Match) -> str:
        word = match.group(1)
        shown = f"<code>{word}</code>"
        return f'<a href="{link}{word}">{shown}</a>' if word in known else shown

    return re.sub(r"`([^`]+)`", span, html.escape(text, quote=False))


def _page(title: str, index: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)} — Gin Rummy service</title>\n"
        f'<link rel="icon" type="image/svg+xml" href="{index}docs/favicon.svg">\n<style>{STYLE}</style>\n</head>\n<body>\n'
        f'<header><h1>{html.escape(title)}</h1><a href="{index}problems">every error code</a>'
        f'<a href="{index}docs">API reference</a></header>\n{body}\n</body>\n</html>\n'
    )


def _rules_table(rules: list[dict], link: str) -> str:
    rows = "".join(f'<tr id="rule-{r["rule"]}"><td><code>{r["rule"]}</code></td><td>{_markup(r["meaning"], link)}</td>'
                   f'<td>{", ".join(f"<code>{p}</code>" for p in r["problems"])}</td></tr>\n' for r in rules)
    return f"<table>\n<tr><th>rule</th><th>meaning</th><th>in</th></tr>\n{rows}</table>"


@functools.cache
def index_page() -> str:
    whole = catalogue()
    link = "problems/"  # relative to /problems
    parts = [
        "<p>Every error is <code>application/problem+json</code> (RFC 9457): <code>type</code>, <code>title</code>, "
        "<code>status</code>, a stable <code>code</code> and a <code>detail</code> for people, plus the members a code "
        "adds. A problem's <code>type</code> is <code>/problems/{code}</code>: this page's entry for it. "
        "<code>Accept: application/json</code> answers this catalogue as JSON.</p>",
    ]
    for category, about in whole["categories"].items():
        entries = [e for e in whole["problems"] if e["category"] == category]
        rows = "".join(
            f'<tr><td><a href="{link}{e["code"]}"><code>{e["code"]}</code></a></td><td>{", ".join(map(str, e["status"]))}</td>'
            f'<td>{html.escape(e["title"])}</td><td><a href="#retry-{e["retry"]}">{e["retry"]}</a></td></tr>\n'
            for e in entries
        )
        parts.append(f'<h2 id="{category}">{html.escape(category)}</h2>\n<p>{_markup(about, link)}</p>\n'
                     f"<table>\n<tr><th>code</th><th>status</th><th>title</th><th>retry</th></tr>\n{rows}</table>")
    retry = "".join(f'<dt id="retry-{key}"><code>{key}</code></dt><dd>{_markup(text, link)}</dd>\n' for key, text in whole["retry"].items())
    parts.append(f'<h2 id="retry">retry: what a client should do</h2>\n<dl>\n{retry}</dl>')
    parts.append(f'<h2 id="rules">rules</h2>\n<p>The <code>rule</code> member of <a href="{link}illegal_move"><code>illegal_move</code></a> '
                 f'(409) and of <a href="{link}illegal_event"><code>illegal_event</code></a> (a refused import).</p>\n'
                 + _rules_table(whole["rules"], link))
    return _page("Error codes", "", "\n".join(parts))


def entry_page(entry: dict[str, Any]) -> str:
    whole = catalogue()
    link = ""  # relative to /problems/{code}: a sibling
    listed = lambda items: ", ".join(f"<code>{html.escape(i)}</code>" for i in items) or "none"  # noqa: E731
    facts = [
        ("code", f"<code>{entry['code']}</code>"),
        ("status", ", ".join(map(str, entry["status"]))),
        ("meaning", _markup(entry["meaning"], link)),
        ("what to do", _markup(entry["action"], link)),
        ("retry", f"<code>{entry['retry']}</code>: {_markup(whole['retry'][entry['retry']], link)}"),
        ("operations (their own reasons)", listed(entry["operations"])),
        ("answered by", "; ".join(html.escape(whole["answered_by"][who]) for who in entry["answered_by"])),
        ("headers", listed(entry["headers"])),
        ("members beyond type, title, status, code, detail", listed(entry["members"])),
    ]
    body = "<dl>\n" + "".join(f"<dt>{name}</dt><dd>{value}</dd>\n" for name, value in facts) + "</dl>\n"
    body += f"<h2>example</h2>\n<pre>{html.escape(json.dumps(entry['example'], indent=2, ensure_ascii=False))}</pre>\n"
    rules = rules_of(entry["code"])
    if rules:
        body += "<h2>rules</h2>\n" + _rules_table(rules, link)
    return _page(f"{entry['code']}: {entry['title']}", "../", body)

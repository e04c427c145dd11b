"""The guides beside the API reference (``service/api/guides/*.md``, served at
``/docs/guides`` and ``/docs/guides/{name}``): every guide is served and linked, every
link on their pages resolves, every operation they name is in the OpenAPI document and
every error code in the catalogue (with the status they give it); and the small Markdown
renderer that serves them renders what CommonMark does."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest

from service.api import create_app
from service.api.guides import GUIDES, named_operation, operations, pages, source
from service.api.guides.markdown import render, slug, title
from service.api.openapi import spec_dict
from service.api.problems import by_code
from service.settings import Settings
from service.store import EventStore

HOST = "http://localhost"
PAGES = {"/docs/guides": "index", **{f"/docs/guides/{name}": name for name in GUIDES}}


@pytest.fixture(scope="module")
def app():
    """An app without a database (the pages need none), with the default settings."""
    return create_app({"STORE": EventStore(pool=None)}, settings=Settings.from_env({}))


@pytest.fixture(scope="module")
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def document(app):
    return spec_dict(app)


class Page(HTMLParser):
    """A page's links (href and src), ids, and text."""

    def __init__(self, text: str):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.title = ""
        self._in_title = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.links += [attrs[name] for name in ("href", "src") if attrs.get(name) is not None]
        if "id" in attrs:
            self.ids.add(attrs["id"])
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def get(client, path: str):
    return client.get(path, headers={"Accept": "text/html"})


def code_spans(text: str) -> list[str]:
    """The code spans of a guide's Markdown, outside its code blocks."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.findall(r"`([^`]+)`", prose)


# --- served and linked --------------------------------------------------------------


def test_every_guide_is_served_with_the_header_of_the_reference(client):
    for path, name in PAGES.items():
        r = get(client, path)
        assert r.status_code == 200 and r.mimetype == "text/html", path
        page = Page(r.get_data(as_text=True))
        assert page.title == f"{title(source(name))} — Gin Rummy service", path
        assert 'class="gin-header"' in r.get_data(as_text=True), path
        # The header: back to the reference, the guides, the catalogue, the document.
        assert {"docs", "docs/guides", "problems", "openapi.json"} <= {urlsplit(urljoin(HOST + path, link)).path.lstrip("/") for link in page.links}
    assert get(client, "/docs").status_code == 200
    assert 'href="docs/site.css"' in get(client, "/docs").get_data(as_text=True)  # the same header, the same stylesheet


def test_every_guide_is_linked_from_the_index_from_every_guide_and_from_the_reference(client):
    docs = Page(get(client, "/docs").get_data(as_text=True))
    assert "/docs/guides" in {urlsplit(urljoin(HOST + "/docs", link)).path for link in docs.links}
    for path in PAGES:
        linked = {urlsplit(urljoin(HOST + path, link)).path for link in Page(get(client, path).get_data(as_text=True)).links}
        assert {f"/docs/guides/{name}" for name in GUIDES} <= linked, path
    index = source("index")
    assert all(f"(/docs/guides/{name})" in index for name in GUIDES), "the index's own list names every guide"


def test_every_internal_link_of_every_page_resolves(client, document):
    deep_links = set(operations(document).values())
    checked = set()
    for path in PAGES:
        page = Page(get(client, path).get_data(as_text=True))
        for link in page.links:
            url = urljoin(HOST + path, link)
            parts = urlsplit(url)
            assert parts.netloc == "localhost", f"{path}: {link} leaves the service (the pages work offline)"
            if parts.path == path and parts.fragment:
                assert parts.fragment in page.ids, f"{path}: no #{parts.fragment} on the page"
                continue
            if parts.path == "/docs" and parts.fragment:
                assert "#" + parts.fragment in deep_links, f"{path}: {link} is no operation of the reference"
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if target not in checked:
                r = get(client, target)
                assert r.status_code == 200, f"{path}: {link} -> {target}: {r.status_code}"
                checked.add(target)
    assert "/problems" in checked and "/docs/favicon.svg" in checked and "/docs/site.css" in checked


def test_an_unknown_guide_is_a_404_problem(client):
    r = get(client, "/docs/guides/no-such-guide")
    assert r.status_code == 404 and r.mimetype == "application/problem+json" and r.json["code"] == "not_found"
    assert "/docs/guides" in r.json["detail"]


def test_the_pages_are_gzipped_and_revalidated_by_their_etag(client):
    plain = get(client, "/docs/guides/first-match")
    packed = client.get("/docs/guides/first-match", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip" and gzip.decompress(packed.data) == plain.data
    assert plain.headers["Cache-Control"] == "no-cache"  # an upgrade's guides are seen at once
    again = client.get("/docs/guides/first-match", headers={"If-None-Match": plain.headers["ETag"]})
    assert again.status_code == 304 and not again.data


# --- what the guides name ---------------------------------------------------------------


def test_every_operation_a_guide_names_is_in_the_openapi_document_and_linked_to_it(client, document):
    known = operations(document)
    named = {}
    for name in GUIDES:
        for span in code_spans(source(name)):
            operation = named_operation(span)
            if operation is not None:
                named[span] = name
                assert operation in known, f"{name}: `{span}` is no operation of the OpenAPI document"
    assert len(named) >= 25 and "POST /matches/{id}/actions" in named
    page = get(client, "/docs/guides/first-match").get_data(as_text=True)
    assert '<a href="../../docs#/matches/act"><code>POST /matches/{id}/actions</code></a>' in page


def test_every_error_code_a_guide_names_is_in_the_catalogue_with_that_status(client):
    entries = by_code()
    named = set()
    for name in GUIDES:
        text = source(name)
        # "412 `version_mismatch`": a status, then the code it gives.
        for status, code in re.findall(r"(?<![\w-])([1-5]\d\d) `([a-z][a-z0-9_]*)`", text):
            assert code in entries, f"{name}: {status} `{code}` is not in the catalogue"
            assert int(status) in entries[code]["status"], f"{name}: `{code}` is not answered with {status}"
            named.add(code)
        for code in re.findall(r'"code":\s*"(\w+)"', text) + re.findall(r'isProblem\(error, ((?:"\w+"(?:, )?)+)\)', text):
            for one in re.findall(r"\w+", code):
                assert one in entries, f"{name}: {one!r} is not in the catalogue"
    assert {"version_mismatch", "conflict", "illegal_move", "idempotency_key_reused", "rate_limited", "busy"} <= named
    # A code span that is a catalogued code links to its entry.
    page = get(client, "/docs/guides/errors").get_data(as_text=True)
    assert '<a href="../../problems/version_mismatch"><code>version_mismatch</code></a>' in page


@pytest.mark.parametrize("name", ["index", *GUIDES])
def test_a_guide_makes_no_internal_references(name):
    """As the README (tests/test_readme.py): nothing of how the service was made."""
    for pattern in (r"\bissues?\s+\d", r"#\d{1,3}\b", r"\bseeds?\b", r"\btickets? #", r"\bTODO\b", r"\bXXX\b"):
        assert not re.search(pattern, source(name), re.I), f"{name}: {pattern!r}"


def test_a_problem_a_guide_shows_has_the_members_of_a_real_one():
    for name in GUIDES:
        for block in re.findall(r"^```json\n(.*?)^```", source(name), flags=re.M | re.S):
            body = json.loads(block)
            if "code" in body and "type" in body:
                example = by_code()[body["code"]]["example"]
                assert body["type"] == f"/problems/{body['code']}" and set(body) == set(example), name
                assert (body["title"], body["status"]) == (example["title"], example["status"]), name


def test_the_ratelimit_fields_a_guide_shows_are_those_the_service_sends_by_default(client):
    r = client.get("/docs/guides", headers={"Authorization": "Bearer any-token"})
    text = source("errors")
    assert f"RateLimit-Policy: {r.headers['RateLimit-Policy']}\n" in text
    shown = re.search(r"^RateLimit: (.*)$", text, flags=re.M)[1]
    assert re.sub(r"=\d+", "=N", shown) == re.sub(r"=\d+", "=N", r.headers["RateLimit"])


def test_the_signature_check_a_guide_shows_verifies_the_services_signatures(tmp_path):
    """The JavaScript of the records guide, in Node.js: it accepts a record signed as the
    service signs one (``signed_bytes``: names beyond ASCII, keys in any order) and refuses
    it changed."""
    if not shutil.which("node"):
        pytest.skip("Node.js is not installed")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.records.signing import ALGORITHM, b64url, jwk, key_id, signed_bytes

    key = Ed25519PrivateKey.generate()
    record = {"seats": [{"seat": 0, "name": "Zoë 🂡", "player": None}], "events": [{"seq": 1, "data": {"b": True, "a": -1}}],
              "format": "gin-rummy-match", "z": 'tab\t, "quoted" \\ / \u2028 \x01'}
    signature = {"algorithm": ALGORITHM, "key_id": key_id(key.public_key()), "signer": None, "value": b64url(key.sign(signed_bytes(record)))}
    snippet = re.search(r"^```js\n(.*?)^```", source("records").split("## Signatures", 1)[1], flags=re.M | re.S)[1]
    for changed, expected in ((False, "true"), (True, "false")):
        body = {**record, "signature": signature, **({"format": "another"} if changed else {})}
        script = tmp_path / "verify.mjs"
        script.write_text(
            f"const record = {json.dumps(body, ensure_ascii=False)};\nconst API = 'http://service';\n"
            f"globalThis.fetch = async () => ({{ json: async () => ({json.dumps({'keys': [jwk(key.public_key())]})}) }});\n"
            f"{snippet}\nconsole.log(valid);\n",
            encoding="utf-8",
        )
        done = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60, check=False)
        assert done.stdout.strip() == expected, done.stderr[-2000:]


# --- the renderer ---------------------------------------------------------------------------


SAMPLE = """# A title

A paragraph with `code`, **bold**, a [link](/docs) and
a second line: 1 < 2 & "quoted".

## Lists

- one `GET /matches/{id}`
  continued
- two
1. first
2. second

```js
const a = "<b>";
```

| a | b |
|---|---|
| `x` | **y** |
"""

SAMPLE_HTML = """<h1 id="a-title">A title</h1>
<p>A paragraph with <code>code</code>, <strong>bold</strong>, a <a href="../docs">link</a> and
a second line: 1 &lt; 2 &amp; &quot;quoted&quot;.</p>
<h2 id="lists">Lists</h2>
<ul>
<li>one <a href="op"><code>GET /matches/{id}</code></a>
continued</li>
<li>two</li>
</ul>
<ol>
<li>first</li>
<li>second</li>
</ol>
<pre><code class="language-js">const a = &quot;&lt;b&gt;&quot;;
</code></pre>
<table>
<thead>
<tr><th>a</th><th>b</th></tr>
</thead>
<tbody>
<tr><td><code>x</code></td><td><strong>y</strong></td></tr>
</tbody>
</table>
"""


def test_the_renderer_renders_each_construct_of_its_subset():
    html = render(SAMPLE, link=lambda href: ".." + href, code=lambda span: "op" if span.startswith("GET ") else None)
    assert html == SAMPLE_HTML
    assert slug("Idempotency-Key and Idempotent-Replayed") == "idempotency-key-and-idempotent-replayed"
    assert title(SAMPLE) == "A title"
    assert "<script>" not in render("<script>alert(1)</script> and `<b>`") and "&lt;b&gt;" in render("`<b>`")


class Tokens(HTMLParser):
    """HTML as a comparable sequence: tags with their attributes (but ids), and text with
    its runs of white space made one space."""

    def __init__(self, text: str):
        super().__init__()
        self.out: list[tuple] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.out.append(("start", tag, sorted((k, v) for k, v in attrs if k != "id")))

    def handle_endtag(self, tag):
        self.out.append(("end", tag))

    def handle_data(self, data):
        text = " ".join(data.split())
        if self.out and self.out[-1][0] == "text":
            self.out[-1] = ("text", " ".join((self.out[-1][1] + " " + text).split()))
        elif text:
            self.out.append(("text", text))


@pytest.mark.parametrize("name", ["index", *GUIDES])
def test_the_renderer_agrees_with_commonmark_on_every_guide(name):
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (a test dependency's) is not installed")
    text = source(name)
    assert not re.search(r"[ \t]$", text, flags=re.M), "no trailing white space (CommonMark reads two spaces as a line break)"
    ours = Tokens(render(text)).out
    theirs = Tokens(markdown_it.MarkdownIt("commonmark").enable("table").render(text)).out
    assert ours == theirs


def test_the_pages_are_rendered_once_per_app(app):
    with app.app_context():
        assert app.test_client().get("/docs/guides").status_code == 200
    rendered = app.extensions["gin_rummy_guides"]
    assert set(rendered) == {"index", *GUIDES}
    assert rendered == pages(spec_dict(app), by_code())

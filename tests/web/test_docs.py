"""The API reference (``/docs``), its guides and the error catalogue in headless Chromium.

- The reference renders every operation; how long its first render takes is measured and
  printed at the end of the run (a figure to watch, never a pass or a fail).  The page
  fetches the document once: Swagger UI takes the fetch the page starts in its <head>.
- A deep link opens its operation, with nothing in the console: Swagger UI reads an
  underscore in a deep link (``#/matches/get_match``) as an escaped space and logs a
  deprecation error unless docs.html reads the link itself.  An opened operation's schemas
  read a 3.1 ``$ref`` with its siblings (docs.html resolves references with the resolver
  Swagger UI gives 3.0 documents, which would drop them).
- A real problem's ``type``, resolved against the request's URL, opens the catalogue's
  entry for its code.
- The reference's header leads to the guides, and a guide's operations back into the
  reference.
"""

from __future__ import annotations

import re
import time
from urllib.parse import urljoin

import pytest

pytestmark = pytest.mark.web

#: What the tests measured, printed after the run (see Figures).
FIGURES: list[str] = []
GREEN = "rgb(20, 83, 45)"  # the header's background, #14532d


class Figures:
    """Prints FIGURES in the terminal summary, as the scale tests print theirs."""

    def pytest_terminal_summary(self, terminalreporter):
        if FIGURES:
            terminalreporter.write_line("web tests measured: " + "; ".join(FIGURES))


@pytest.fixture(scope="module", autouse=True)
def figures(pytestconfig):
    if not pytestconfig.pluginmanager.has_plugin("gin-rummy-web-figures"):
        pytestconfig.pluginmanager.register(Figures(), "gin-rummy-web-figures")


def console(page) -> list[str]:
    """The page's console errors and warnings, any message about a deprecation, and its
    uncaught exceptions, as they come."""
    messages: list[str] = []

    def seen(message):
        if message.type in ("error", "warning") or "deprecat" in message.text.lower():
            messages.append(f"{message.type}: {message.text}")

    page.on("console", seen)
    page.on("pageerror", lambda error: messages.append(f"uncaught: {error}"))
    return messages


def rendered(page, go) -> float:
    """Seconds from ``go()`` (a navigation) until the reference shows its operations."""
    started = time.perf_counter()
    go()
    page.locator(".opblock").first.wait_for(state="visible")
    return time.perf_counter() - started


def test_the_reference_renders_every_operation(live_server, context):
    from playwright.sync_api import expect

    page = context.new_page()
    messages = console(page)
    fetched: list[str] = []

    def asked(request):
        if request.url.endswith("/openapi.json"):
            fetched.append(request.url)

    page.on("request", asked)
    first = rendered(page, lambda: page.goto(f"{live_server}/docs"))
    assert len(fetched) == 1, f"the document, fetched {len(fetched)} times"
    again = rendered(page, page.reload)  # Swagger UI's files now revalidated from the browser's cache
    document = page.request.get(f"{live_server}/openapi.json").json()
    operations = sum(1 for item in document["paths"].values() for method in item if method in ("get", "post", "patch", "delete", "put"))
    expect(page.locator(".opblock")).to_have_count(operations)
    FIGURES.append(f"/docs first render: {first:.2f} s (reloaded: {again:.2f} s)")
    assert not messages


def test_a_deep_link_opens_its_operation_with_nothing_in_the_console(live_server, context):
    from playwright.sync_api import expect

    for tag, operation in (("matches", "get_match"), ("records", "import_one"), ("matches", "act")):
        page = context.new_page()  # a link opened afresh (the hash changed in a page is no new load)
        messages = console(page)
        page.goto(f"{live_server}/docs#/{tag}/{operation}")
        block = page.locator(f"#operations-{tag}-{operation}")
        expect(block).to_have_class(re.compile(r"\bis-open\b"))
        expect(block.locator(".opblock-body")).to_be_visible()
        assert page.url.endswith(f"/docs#/{tag}/{operation}")
        assert page.locator(".opblock.is-open").count() == 1, "only the operation linked is open"
        if operation == "import_one":  # ImportResult.provenance: a $ref to Provenance with a description
            created = block.locator('tr.response[data-code="201"]')
            created.get_by_role("tab", name="Schema").click()
            expect(created).to_contain_text("What the import could check.")
        assert not messages, f"#/{tag}/{operation}: {messages}"
        page.close()


def test_a_problems_type_opens_its_entry_in_the_catalogue(live_server, context):
    from playwright.sync_api import expect

    page = context.new_page()
    messages = console(page)
    response = page.request.get(f"{live_server}/matches/00000000-0000-4000-8000-000000000000")  # no token
    assert response.status == 401 and response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    entry = urljoin(response.url, problem["type"])
    assert entry == f"{live_server}/problems/{problem['code']}"
    page.goto(entry)
    expect(page.locator("h1")).to_contain_text(f"{problem['code']}: ")
    expect(page.locator("dd").first).to_have_text(problem["code"])
    expect(page.locator("pre")).to_contain_text(f'"code": "{problem["code"]}"')
    page.get_by_role("link", name="every error code").click()
    expect(page.locator(f'a[href="problems/{problem["code"]}"]')).to_be_visible()
    assert not messages


def test_the_reference_leads_to_the_guides_and_a_guide_back_to_an_operation(live_server, context):
    from playwright.sync_api import expect

    page = context.new_page()
    messages = console(page)
    page.goto(f"{live_server}/docs")
    assert page.locator(".gin-header").evaluate("e => getComputedStyle(e).backgroundColor") == GREEN
    page.locator(".gin-header").get_by_role("link", name="guides").click()
    expect(page).to_have_url(f"{live_server}/docs/guides")
    page.locator("main").get_by_role("link", name="A first match").click()
    expect(page).to_have_url(f"{live_server}/docs/guides/first-match")
    expect(page.locator("main h1")).to_have_text("A first match")
    expect(page.locator('.gin-guides a[aria-current="page"]')).to_have_text("A first match")
    assert page.locator(".gin-header").evaluate("e => getComputedStyle(e).backgroundColor") == GREEN  # the same header
    page.get_by_role("link", name="GET /matches/{id}", exact=True).first.click()
    expect(page).to_have_url(f"{live_server}/docs#/matches/get_match")
    expect(page.locator("#operations-matches-get_match")).to_have_class(re.compile(r"\bis-open\b"))
    page.goto(f"{live_server}/docs/guides/errors")
    page.locator("main").get_by_role("link", name="catalogue of error codes").click()
    expect(page).to_have_url(f"{live_server}/problems")
    assert not messages

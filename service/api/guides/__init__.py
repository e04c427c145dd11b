"""The guides beside the API reference, for a front end's developer: Markdown files in
this folder (``index.md`` and one per guide), served as HTML pages with the reference's
header at ``/docs/guides`` and ``/docs/guides/{name}`` (``service.api.meta``).

A guide writes the service's own addresses from its root (``/problems``,
``/docs/guides/records``); each page gets them relative to where it is served, as the
reference and the catalogue do, so that the pages work behind a proxy that serves the
service under a path of its own.  A code span naming an operation (``GET /matches/{id}``)
links to it in the reference, and one naming an error code (``version_mismatch``) to
its entry in the catalogue.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection
from importlib import resources
from string import Template

from .markdown import render, title

#: The guides, in the order they are read.
GUIDES = ("first-match", "online-play", "records", "errors")

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
OPERATION = re.compile(rf"({'|'.join(METHODS)}) (/[^\s?#]*)(?:\?\S*)?")


def source(name: str) -> str:
    """A guide's Markdown (``index``: the index's)."""
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def route(path: str) -> str:
    """A path with its parameters unnamed: ``/matches/{id}`` and ``/matches/{match_id}`` are one."""
    return re.sub(r"\{[^}/]*\}", "{}", path)


def operations(document: dict) -> dict[tuple[str, str], str]:
    """(method, route) -> the operation's deep link in Swagger UI (``#/tag/operationId``),
    for every operation of the OpenAPI ``document``."""
    found = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method.upper() in METHODS:
                tag = (operation.get("tags") or ["default"])[0]
                found[(method.upper(), route(path))] = f"#/{tag}/{operation['operationId']}"
    return found


def named_operation(span: str) -> tuple[str, str] | None:
    """(method, route) when a code span names an operation: ``POST /matches/{id}/actions``."""
    match = OPERATION.fullmatch(span)
    return (match[1], route(match[2])) if match else None


def pages(document: dict, codes: Collection[str]) -> dict[str, bytes]:
    """Every page as HTML: ``index`` and each guide by name; ``document`` is the OpenAPI
    document (the operations linked), ``codes`` the catalogue's error codes."""
    deep_links = operations(document)
    titles = {name: title(source(name)) for name in GUIDES}

    def page(name: str, root: str) -> bytes:
        def link(href: str) -> str:
            return root + href[1:] if href.startswith("/") else href

        def code(span: str) -> str | None:
            named = named_operation(span)
            if named is not None:
                return f"{root}docs{deep_links[named]}" if named in deep_links else None
            return f"{root}problems/{span}" if span in codes else None

        current = ' aria-current="page"'
        nav = "\n".join(
            f'<a href="{root}docs/guides/{guide}"{current if guide == name else ""}>{html.escape(titles[guide])}</a>' for guide in GUIDES
        )
        text = source(name)
        filled = Template(resources.files(__name__).joinpath("page.html").read_text(encoding="utf-8")).substitute(
            title=html.escape(title(text)), root=root, nav=nav, body=render(text, link, code)
        )
        return filled.encode()

    # /docs/guides is beside /docs, a guide one folder further down.
    return {"index": page("index", "../"), **{name: page(name, "../../") for name in GUIDES}}

"""A small Markdown renderer: the subset the guides are written in, nothing more.

Blocks: ATX headings (``#`` to ``####``, each with an ``id`` made from its text),
paragraphs, bullet lists (``-``) and ordered lists (``1.``) whose items are one
paragraph each (continued on lines indented by two or more spaces), fenced code blocks
(```` ``` ```` with an optional language) and pipe tables (a header row, a ``|---|``
row, then rows).  Inline: code spans (one backtick), links ``[text](href)`` and bold
``**text**``.  Everything else is text: HTML is escaped, never passed through.

The output is what CommonMark (with GitHub's tables) makes of the same text, plus the
headings' ids and two hooks: ``link`` rewrites every link's target, and ``code`` may
turn a code span into a link (the guides link each operation and error code they name).
``tests/api/test_guides.py`` holds the guides' rendering to markdown-it-py's.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

HEADING = re.compile(r"(#{1,4}) +(.+?) *#* *$")
FENCE = re.compile(r"```([\w-]*) *$")
BULLET = re.compile(r"- +(.*)$")
NUMBERED = re.compile(r"(\d{1,9})\. +(.*)$")
TABLE_RULE = re.compile(r"\|? *:?-+:? *(\| *:?-+:? *)*\|? *$")
INLINE = re.compile(r"(?P<code>`[^`]+`)|\[(?P<text>(?:`[^`]*`|[^\]`])+)\]\((?P<href>[^()\s]+)\)|\*\*(?P<bold>[^*]+)\*\*")

Hook = Callable[[str], str]
CodeHook = Callable[[str], "str | None"]


def slug(text: str) -> str:
    """A heading's id: its words, lower case, joined by hyphens."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def escape(text: str) -> str:
    return html.escape(text, quote=True).replace("&#x27;", "'")


def inline(text: str, link: Hook = str, code: CodeHook = lambda span: None) -> str:
    """One block's text as HTML: code spans, links and bold; the rest escaped."""
    out, at = [], 0
    for match in INLINE.finditer(text):
        out.append(escape(text[at : match.start()]))
        at = match.end()
        if match["code"]:
            span = match["code"][1:-1]
            if span.startswith(" ") and span.endswith(" ") and span.strip():
                span = span[1:-1]
            shown = f"<code>{escape(span)}</code>"
            href = code(span)
            out.append(f'<a href="{escape(href)}">{shown}</a>' if href else shown)
        elif match["href"]:
            out.append(f'<a href="{escape(link(match["href"]))}">{inline(match["text"], link)}</a>')
        else:
            out.append(f"<strong>{inline(match['bold'], link, code)}</strong>")
    out.append(escape(text[at:]))
    return "".join(out)


def cells(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [cell.strip() for cell in row.split("|")]


def render(text: str, link: Hook = str, code: CodeHook = lambda span: None) -> str:
    """``text`` (Markdown of the subset above) as HTML."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0

    def span(value: str) -> str:
        return inline(value, link, code)

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif fence := FENCE.match(line):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            language = f' class="language-{fence[1]}"' if fence[1] else ""
            body = "".join(escape(lines[j]) + "\n" for j in range(i + 1, end))
            out.append(f"<pre><code{language}>{body}</code></pre>")
            i = end + 1
        elif heading := HEADING.match(line):
            level = len(heading[1])
            out.append(f'<h{level} id="{slug(heading[2])}">{span(heading[2])}</h{level}>')
            i += 1
        elif line.startswith("|") and i + 1 < len(lines) and TABLE_RULE.match(lines[i + 1]):
            head = "".join(f"<th>{span(c)}</th>" for c in cells(line))
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append("<tr>" + "".join(f"<td>{span(c)}</td>" for c in cells(lines[i])) + "</tr>")
                i += 1
            body = f"<tbody>\n{chr(10).join(rows)}\n</tbody>\n" if rows else ""
            out.append(f"<table>\n<thead>\n<tr>{head}</tr>\n</thead>\n{body}</table>")
        elif BULLET.match(line) or NUMBERED.match(line):
            pattern = BULLET if BULLET.match(line) else NUMBERED
            items: list[list[str]] = []
            first = NUMBERED.match(line)
            while i < len(lines):
                item = pattern.match(lines[i])
                if item:
                    items.append([item.groups()[-1]])
                elif lines[i].startswith("  ") and lines[i].strip() and items:
                    items[-1].append(lines[i].strip())
                else:
                    break
                i += 1
            tag = "ol" if first else "ul"
            start = f' start="{int(first[1])}"' if first and int(first[1]) != 1 else ""
            body = "\n".join(f"<li>{span(chr(10).join(item))}</li>" for item in items)
            out.append(f"<{tag}{start}>\n{body}\n</{tag}>")
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not starts_block(lines, i):
                paragraph.append(lines[i].strip())
                i += 1
            out.append(f"<p>{span(chr(10).join(paragraph))}</p>")
    return "\n".join(out) + "\n"


def starts_block(lines: list[str], i: int) -> bool:
    """Whether line ``i`` opens a block other than a paragraph (which it then ends)."""
    line = lines[i]
    numbered = NUMBERED.match(line)
    return bool(FENCE.match(line) or HEADING.match(line) or BULLET.match(line) or (numbered and numbered[1] == "1"))


def title(text: str) -> str:
    """The text of the first level-1 heading."""
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading and len(heading[1]) == 1:
            return heading[2]
    raise ValueError("no level-1 heading")

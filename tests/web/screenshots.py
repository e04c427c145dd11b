"""Take the README's screenshots of the reference web client.

    python -m tests.web.screenshots [--out service/web/screenshots] [--database-url URL]

Plays against the computer through the page (as the browser tests do) until the hand
shows a knock to make, then photographs the table, the hand result and the replay
viewer, at a desktop width and at a phone width.  ``--database-url`` is a server's
admin URL (a scratch database is created and dropped); without it an embedded server
is started.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from service.store import EventStore, connect
from service.store.database import temporary_server
from service.store.migrate import scratch_database

from .conftest import make_app
from .support import Client, chromium, serving

OUT = Path(__file__).parents[2] / "service" / "web" / "screenshots"
SIZES = {"desktop": {"width": 1000, "height": 820}, "phone": {"width": 390, "height": 844}}


@contextlib.contextmanager
def database(admin_url: str | None):
    with contextlib.ExitStack() as stack:
        if admin_url is None:
            admin_url = stack.enter_context(temporary_server("gin-rummy-shots-")).get_uri()
        url = stack.enter_context(scratch_database(admin_url, "gin_rummy_shots"))
        pool = stack.enter_context(connect(url, max_size=6))
        yield EventStore(pool)


def table_worth_showing(client: Client) -> bool:
    """A discard to make with two melds in hand and a knock on offer."""
    page = client.page
    return (
        client.phase() == "discard"
        and page.locator("#hand .group.meld").count() >= 2
        and page.locator("#hand .card.can-end").count() > 0
    )


def shoot(browser, base: str, out: Path, size: str) -> None:
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=1)
    client = Client(context.new_page(), base)
    page = client.page
    for _attempt in range(12):
        client.new_match(preset="classic", single=False, opponent="computer", level="medium", names=("Ann", "Computer"))
        for _ in range(80):
            phase = client.phase()
            if phase == "result" or table_worth_showing(client):
                break
            client.play_turn()
        if table_worth_showing(client):
            break
    card = page.locator("#hand .card.can-end").first.get_attribute("data-card")
    client.click_card(card)
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"table-{size}.png"), full_page=True)
    page.click("#knock")
    page.wait_for_selector("#result")
    page.screenshot(path=str(out / f"result-{size}.png"), full_page=True)
    page.click("#replay-link")
    page.wait_for_selector("#replay-board")
    page.keyboard.press("End")
    for _ in range(4):
        page.keyboard.press("ArrowLeft")
    page.screenshot(path=str(out / f"replay-{size}.png"), full_page=True)
    assert not client.errors, client.errors
    context.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--database-url", help="a PostgreSQL server's admin URL (default: an embedded server)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with database(args.database_url) as store, serving(make_app(store)) as base, chromium() as browser:
        for size in SIZES:
            shoot(browser, base, args.out, size)
    for path in sorted(args.out.glob("*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Take the README's screenshots of the reference web client.

    python -m tests.web.screenshots [--out service/web/screenshots] [--database-url URL]

Plays against the computer through the page (as the browser tests do) until the hand
shows a knock to make, then photographs the table, the hand result and the replay
viewer; then two people on two devices: the invite page, the lobby, the join page and
the table of a match played online under a clock -- each at a desktop width and at a
phone width.  ``--database-url`` is a server's
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
from .support import Client, api, chromium, serving

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


def seed_lobby(base: str) -> None:
    """Two other players waiting in the lobby."""
    for name, seconds in (("Mia", None), ("Leo", 259200)):
        body = {"rules": {"preset": "upcard-offer", "turn_seconds": seconds}, "seats": [{"name": name}, {"kind": "open"}], "public": True}
        api(base, "POST", "/matches", body)


def shoot_online(browser, base: str, out: Path, size: str) -> None:
    """Ann invites a friend (30 seconds per turn, listed in the lobby); Bob finds the
    match in the lobby, joins; Ann plays her turn; Bob's table shows his clock running."""
    contexts = [browser.new_context(viewport=SIZES[size], device_scale_factor=1) for _ in range(2)]
    ann, bob = (Client(c.new_page(), base) for c in contexts)
    match_id = ann.new_match(preset="classic", single=False, opponent="friend", names=("Ann",), clock="30", public=True)
    ann.page.mouse.move(0, 0)
    ann.page.screenshot(path=str(out / f"invite-{size}.png"), full_page=True)

    bob.open("#/lobby")
    bob.page.locator(f'#lobby-list li[data-id="{match_id}"]').wait_for()
    bob.page.fill("#lobby-name", "Bob")
    bob.page.screenshot(path=str(out / f"lobby-{size}.png"), full_page=True)
    bob.page.goto(ann.page.input_value("#invite-url"))
    bob.page.fill("#join-name", "Bob")
    bob.page.screenshot(path=str(out / f"join-{size}.png"), full_page=True)
    bob.page.click("#join")
    bob.page.wait_for_selector("#hand .card")
    ann.page.wait_for_selector("#hand .card")
    # At a person's pace: the service keeps its answer to who follows a match 2 s.
    ann.page.wait_for_timeout(2_500)
    while ann.my_turn():
        ann.play_turn()
    bob.wait_for_version(ann.version())
    bob.page.wait_for_selector("#presence[data-connected=true]")
    bob.page.click("#stock")
    bob.page.wait_for_selector("#table[data-phase=discard]:not(.busy)")
    bob.page.mouse.move(0, 0)
    bob.page.evaluate("document.getElementById('toast').hidden = true")
    bob.page.screenshot(path=str(out / f"online-{size}.png"), full_page=True)
    assert not ann.errors and not bob.errors, (ann.errors, bob.errors)
    for context in contexts:
        context.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--database-url", help="a PostgreSQL server's admin URL (default: an embedded server)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with database(args.database_url) as store, serving(make_app(store)) as base, chromium() as browser:
        seed_lobby(base)
        for size in SIZES:
            shoot(browser, base, args.out, size)
            shoot_online(browser, base, args.out, size)
    for path in sorted(args.out.glob("*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Take the README's screenshots of the reference web client.

    python -m tests.web.screenshots [--out service/web/screenshots] [--database-url URL] [--only players]

Plays against the computer through the page (as the browser tests do) until the hand
shows a knock to make, then photographs the table, the hand result and the replay
viewer; then the coach: a hint at the table, and the replay of a carelessly played hand
with each decision marked; then two people on two devices: the invite page, the lobby, the join page and
the table of a match played online under a clock; then players: My games, the profile
and the leaderboard of a few players with rated matches (made through the API); then
laying out melds by hand, on a fixed deal between two people on one device: the
knocker's arrangement step and the defender's choice of layoffs -- each at a desktop
width and at a phone width.  ``--database-url`` is a server's
admin URL (a scratch database is created and dropped); without it an embedded server
is started.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from service.store import EventStore, connect
from service.store.database import temporary_server
from service.store.migrate import scratch_database

from .conftest import make_app
from .support import KNOCK_DEAL, Client, FixedDeals, api, chromium, play_carelessly, serving

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
    client.end_hand("knock")
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


def shoot_coach(browser, base: str, out: Path, size: str) -> None:
    """Ann asks for a hint at her first discard against the computer; then the replay of
    a hand she played carelessly, at her costliest play: its mark, the better play, and
    both seats' accuracy."""
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=1)
    client = Client(context.new_page(), base)
    page = client.page
    for _attempt in range(6):
        client.new_match(preset="classic", single=True, opponent="computer", level="medium", names=("Ann", "Computer"))
        while client.phase() in ("upcard_offer", "draw"):
            client.play_turn()
        if client.phase() == "discard":
            break
    page.click("#hint")
    page.wait_for_selector("#hint-text")
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"hint-{size}.png"), full_page=True)

    seats = [{"name": "Ann"}, {"kind": "computer", "level": "medium", "name": "Computer"}]
    made = api(base, "POST", "/matches", {"rules": {"preset": "classic", "single_hand": True}, "seats": seats})
    match_id, token = made["id"], made["seats"][0]["token"]
    play_carelessly(base, match_id, token)
    decisions = api(base, "GET", f"/matches/{match_id}/hands/1/analysis", token=token)["decisions"]
    plays = api(base, "GET", f"/matches/{match_id}/hands/1", token=token)["plays"]
    worst = max((d for d in decisions if d["seat"] == 0), key=lambda d: d["cost"])
    client.keep_seat(match_id, {0: token}, mode="computer", finished=True)
    client.open(f"#/replay/{match_id}/1")
    page.wait_for_selector("#replay-marks button.mark")
    page.click(f'#replay-marks [data-step="{[p["seq"] for p in plays].index(worst["seq"]) + 1}"]')
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"analysis-{size}.png"), full_page=True)
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


PLAYERS = ("Ann", "Bob", "Cleo", "Dev", "Ema", "Finn")


def seed_players(base: str) -> dict:
    """Six guests who played each other once (a resignation ends each match, so every
    one of them has 5 rated matches); then Ann's games under way: her move against Bob
    under a 3-day clock, Cleo's move, the computer, and an invite nobody took yet.
    Answers Ann ({"id", "name", "token"})."""
    people = [api(base, "POST", "/players", {"name": name}) for name in PLAYERS]
    single = {"rules": {"preset": "classic"}, "single_hand": True, "seats": [{"kind": "human"}, {"kind": "open"}]}

    def play(a: dict, b: dict, body: dict) -> str:
        made = api(base, "POST", "/matches", body, token=a["token"])
        api(base, "POST", f"/matches/{made['id']}/join", {"code": made["invite"]["code"]}, token=b["token"])
        return made["id"]

    # Each pair once; the loser resigns. Who wins: mostly the earlier of the two in a
    # shuffled order, so that the ratings spread out.
    order = ["Cleo", "Ann", "Finn", "Bob", "Ema", "Dev"]
    upsets = {("Dev", "Cleo"), ("Bob", "Ann")}
    for i, a in enumerate(people):
        for b in people[i + 1 :]:
            match_id = play(a, b, single)
            winner = min((a, b), key=lambda p: order.index(p["name"]))
            if (a["name"], b["name"]) in upsets or (b["name"], a["name"]) in upsets:
                winner = b if winner is a else a
            loser = b if winner is a else a
            api(base, "POST", f"/matches/{match_id}/actions", {"type": "resign"}, token=loser["token"])

    ann, bob, cleo = people[0], people[1], people[2]
    clocked = {"rules": {"preset": "classic", "turn_seconds": 259200}, "single_hand": False, "seats": [{"kind": "human"}, {"kind": "open"}]}
    play(ann, bob, clocked)  # Ann starts
    theirs = play(ann, cleo, {**single, "single_hand": False})
    view = api(base, "GET", f"/matches/{theirs}", token=ann["token"])
    while view["turn"] == view["seat"]:  # Ann plays her turn: Cleo's move next
        legal = [a for a in view["legal_actions"] if a["type"] in ("pass", "draw", "discard")]
        action = next((a for a in legal if a["type"] == "pass"), None) or next(
            (a for a in legal if a.get("source") == "stock"), legal[-1]
        )
        view = api(base, "POST", f"/matches/{theirs}/actions", action, token=ann["token"])["view"]
    api(base, "POST", "/matches", {"rules": {"preset": "classic"}, "seats": [{"kind": "human"}, {"kind": "computer", "level": "medium"}]}, token=ann["token"])
    api(base, "POST", "/matches", {"rules": {"preset": "classic"}, "seats": [{"kind": "human"}, {"kind": "open"}]}, token=ann["token"])
    # The ratings fold a match's end once every older transaction on the server ended.
    deadline = time.monotonic() + 60
    while any(api(base, "GET", f"/players/{p['id']}")["matches"] < 5 for p in people) and time.monotonic() < deadline:
        time.sleep(0.2)
    return ann


def shoot_players(browser, base: str, out: Path, size: str, ann: dict) -> None:
    """Ann's browser (signed in with her secret link): My games, her profile, the
    leaderboard."""
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=1)
    client = Client(context.new_page(), base)
    page = client.page
    client.open(f"#/signin/{ann['token']}")
    page.click("#signin-confirm")
    page.wait_for_selector("#games-playing li")
    page.wait_for_selector("#games-count:not([hidden])")
    page.wait_for_timeout(1_100)  # a clock's first second
    page.evaluate("document.getElementById('toast').hidden = true")
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"games-{size}.png"), full_page=True)
    page.click("#nav-player")
    page.wait_for_selector("#stat-rating")
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"profile-{size}.png"), full_page=True)
    page.click("#nav-leaderboard")
    page.wait_for_selector("#leaderboard-rows tr")
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"leaderboard-{size}.png"), full_page=True)
    assert not client.errors, client.errors
    context.close()


def shoot_arrange(browser, app, base: str, out: Path, size: str) -> None:
    """Under bonus-20-10, Ann knocks: the step opened, her run broken and three of its
    cards picked to make a meld again; then Bob's defense, his 7♠ taken back and picked,
    both of Ann's melds offering to take it."""
    matches = app.extensions["gin_rummy"].matches
    previous, matches.deal_rng = matches.deal_rng, FixedDeals(KNOCK_DEAL)
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=1)
    client = Client(context.new_page(), base)
    page = client.page
    client.start_hotseat("bonus-20-10")
    client.draw("#pile")
    client.click_card("KS")
    page.click("#knock")
    page.click('#arrange .bench-meld:has([data-card="3S"]) button.break')
    for card in ("4S", "5S", "6S"):
        page.click(f'#arrange .bench-loose [data-card="{card}"]')
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"arrange-{size}.png"), full_page=True)
    page.click("#make-meld")
    page.click("#confirm-knock")
    matches.deal_rng = previous
    page.click("#reveal")
    page.wait_for_selector("#defense")
    page.click('#defense .laidoff[data-card="7S"]')
    page.click('#defense .bench-loose [data-card="7S"]')
    page.mouse.move(0, 0)
    page.screenshot(path=str(out / f"defend-{size}.png"), full_page=True)
    assert not client.errors, client.errors
    context.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--database-url", help="a PostgreSQL server's admin URL (default: an embedded server)")
    parser.add_argument(
        "--only", choices=("table", "coach", "online", "players", "arrange"), action="append",
        help="only these screenshots (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(args.only or ("table", "coach", "online", "players", "arrange"))
    with database(args.database_url) as store:
        app = make_app(store)
        with serving(app) as base, chromium() as browser:
            seed_lobby(base)
            ann = seed_players(base) if "players" in only else None
            for size in SIZES:
                if "table" in only:
                    shoot(browser, base, args.out, size)
                if "coach" in only:
                    shoot_coach(browser, base, args.out, size)
                if "online" in only:
                    shoot_online(browser, base, args.out, size)
                if "players" in only:
                    shoot_players(browser, base, args.out, size, ann)
                if "arrange" in only:
                    shoot_arrange(browser, app, base, args.out, size)
    for path in sorted(args.out.glob("*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

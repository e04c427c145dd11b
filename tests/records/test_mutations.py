"""Valid records changed in one place at random: each is refused with a precise 422, or
is still legal and replays to exactly what it claims. Never a 500, never half-imported."""

import copy
import hashlib
import json
import random
import secrets
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pytest

from service.api import create_app
from service.bots import BOTS_VERSION, LEVELS
from service.records.format import digest_of
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory
from tests.records.conftest import content

OP = bearer(OPERATOR)


def paths(obj, prefix=()):
    """Every place in a JSON value: (path, value)."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))


def at(obj, path):
    for p in path[:-1]:
        obj = obj[p]
    return obj


def other_value(value, rng):
    if isinstance(value, bool):
        return rng.choice([not value, "yes", 1])
    if isinstance(value, int):
        return rng.choice([value + 1, value - 1, str(value), None, 10**6])
    if isinstance(value, str):
        return rng.choice(["KD", "AS", "", value + "x", 7, None])
    if isinstance(value, list):
        return value[:-1] if value else [1]
    return rng.choice([None, [], "x"])


def mutate(record, rng):
    """One change in one place, and a description of it."""
    record = copy.deepcopy(record)
    kind = rng.choice(["value", "value", "swap", "drop", "truncate"])
    events = record["events"]
    if kind == "swap":
        i = rng.randrange(len(events) - 1)
        events[i], events[i + 1] = events[i + 1], events[i]
        return record, f"swap events {i} and {i + 1}"
    if kind == "truncate":
        n = rng.randrange(1, len(events))
        del events[n:]
        return record, f"truncate events to {n}"
    places = [(p, v) for p, v in paths(record) if p and p[0] in ("events", "rules", "seats", "result", "match_id")]
    path, value = rng.choice(places)
    parent = at(record, path)
    if kind == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
        return record, f"drop {'/'.join(map(str, path))}"
    parent[path[-1]] = other_value(value, rng)
    return record, f"set {'/'.join(map(str, path))} from {value!r} to {parent[path[-1]]!r}"


@pytest.mark.parametrize("reseal", [False, True], ids=["digest-kept", "digest-recomputed"])
def test_one_random_change_is_refused_precisely_or_replays_to_what_it_claims(store, target, reseal):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    rng = random.Random(f"mutations-{reseal}")
    records = []
    for seed, preset in enumerate(["classic", "bonus-20-10", "upcard-offer"]):
        start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"preset": preset, "target_score": 30})
        match = MatchFactory.create(store=store, start=start, seed=seed)
        records.append(app.get(f"/matches/{match.match_id}/export", headers=OP).json)
    refused = accepted = 0
    present = {rec["match_id"]: {rec["digest"]["value"]} for rec in records}
    for _ in range(60):
        original = rng.choice(records)
        record, change = mutate(original, rng)
        if reseal and isinstance(record.get("events"), list):
            try:
                record["digest"]["value"] = digest_of(record["events"])
            except (KeyError, TypeError):
                pass
        r = target.post("/matches/import", json=record)
        assert r.status_code in (200, 201, 409, 422), (change, r.status_code, r.json)
        if r.status_code in (409, 422):
            refused += 1
            assert r.mimetype == "application/problem+json" and r.json["code"] and r.json["detail"], change
            if r.json["code"] == "illegal_event":
                assert isinstance(r.json["index"], int) and r.json["rule"], change
            # Never half-imported: the match either is absent or is exactly the original.
            there = target.get(f"/matches/{record.get('match_id')}/export", headers=OP)
            assert there.status_code == 404 or there.json["digest"]["value"] in present.get(there.json["match_id"], ()), change
        else:
            accepted += 1
            exported = target.get(f"/matches/{r.json['id']}/export", headers=OP).json
            # Legal after all: it must replay to exactly what it claims.
            assert exported["events"] == record["events"] and exported["result"] == record["result"], change
            present.setdefault(exported["match_id"], set()).add(exported["digest"]["value"])
    assert refused > 30, refused


def test_every_commitment_of_a_played_match_checks_out_from_its_export_alone(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 60})
    match = MatchFactory.create(store=store, start=start)
    record = app.get(f"/matches/{match.match_id}/export", headers=OP).json
    deals = [e["data"] for e in record["events"] if e["type"] == "hand_dealt"]
    ends = [e["data"] for e in record["events"] if e["type"] == "hand_ended"]
    assert len(deals) == len(ends) == match.state.hand_number >= 2
    for dealt, ended in zip(deals, ends, strict=True):
        revealed = hashlib.sha256(f"{ended['salt']}:{','.join(ended['deck'])}".encode()).hexdigest()
        assert revealed == dealt["commitment"]
        assert sorted(ended["deck"]) == sorted(match.state.deck) and len(set(ended["deck"])) == 52


# --- an auditor's mutations -------------------------------------------------------------------
#
# Records genuinely exported (signed) by one service — matches between people under several
# presets, and matches against the computer — changed the way an auditor trying to break
# the import would change them, and imported into a second service (one that trusts the
# first's keys, one that does not).

#: Rows an import writes: a refused record leaves every count as it was.
WRITTEN = ("events", "match_summaries", "match_provenance", "seat_tokens", "match_invites", "snapshots")
#: Where an event names a seat.
SEAT_FIELDS = ("seat", "starter", "winner")


def rows(store) -> dict:
    with store.connection() as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in WRITTEN}


def computer_seats(record) -> list[int]:
    return [s["seat"] for s in record["seats"] if s["kind"] == "computer"]


def ints_in(value, prefix=()):
    return [(p, v) for p, v in paths(value, prefix) if isinstance(v, int) and not isinstance(v, bool)]


def shifted(when: str, **delta) -> str:
    return (datetime.fromisoformat(when) + timedelta(**delta)).isoformat()


def as_offset(when: str, hours: int, minutes: int = 0) -> str:
    """The same instant written at another offset."""
    return datetime.fromisoformat(when).astimezone(timezone(timedelta(hours=hours, minutes=minutes))).isoformat()


def untimed(events) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "recorded_at"} for e in events]


def same_instants(a, b) -> bool:
    return len(a) == len(b) and all(
        datetime.fromisoformat(x["recorded_at"]) == datetime.fromisoformat(y["recorded_at"]) for x, y in zip(a, b)
    )


@dataclass
class Expect:
    """What must become of a mutated record, as far as one can tell without importing it."""

    #: It cannot be legal: accepting it is a failure.
    refused: bool = False
    #: A refusal naming an event (invalid_record, illegal_event) names this one.
    index: int | None = None
    #: The code of the refusal when the record is delivered as changed (digest kept).
    code: str | None = None


def an_auditors_mutation(record, rng, kind, target_kid) -> tuple[str, Expect]:
    """``record`` (a copy) changed in place by one of an auditor's mutations of ``kind``:
    its description, and what must become of it."""
    events = record["events"]
    if kind == "int_to_float":
        path, value = rng.choice(ints_in(events, ("events",)))
        at(record, path)[path[-1]] = float(value)
        return f"set {'/'.join(map(str, path))} from {value!r} to {float(value)!r}", Expect(True, path[1])
    if kind == "schema_version":
        i = rng.randrange(len(events))
        old, new = events[i]["schema_version"], rng.choice([1, 1, 0, 3, 1.0, 2.0, 2.5, -1])
        events[i]["schema_version"] = new
        # Version 1 is real (older data) and may be legal; nothing else is.
        impossible = new not in (1, old) or isinstance(new, float)
        return f"set events/{i}/schema_version of {events[i]['type']} from {old} to {new!r}", Expect(impossible, i if impossible else None)
    if kind == "recorded_at":
        i = rng.randrange(len(events))
        old = events[i]["recorded_at"]
        how = rng.choice(["far future", "year 9999", "year 0001", "offset +23:59", "no offset", "backwards",
                          "same instant +05:30", "same instant Z", "all an hour earlier", "all far future"])
        if how == "far future":
            events[i]["recorded_at"] = "8999-06-01T12:00:00+00:00"
        elif how == "year 9999":
            events[i]["recorded_at"] = "9999-12-31T23:59:59+00:00"
        elif how == "year 0001":
            events[i]["recorded_at"] = "0001-01-01T00:00:00+00:00"
        elif how == "offset +23:59":
            events[i]["recorded_at"] = old[: -len("+00:00")] + "+23:59"
        elif how == "no offset":
            events[i]["recorded_at"] = old[: -len("+00:00")]
        elif how == "backwards":
            i = rng.randrange(1, len(events))
            old = events[i]["recorded_at"]
            events[i]["recorded_at"] = shifted(events[i - 1]["recorded_at"], seconds=-1)
        elif how == "same instant +05:30":
            events[i]["recorded_at"] = as_offset(old, 5, 30)
        elif how == "same instant Z":
            events[i]["recorded_at"] = old.replace("+00:00", "Z")
        elif how == "all an hour earlier":
            for event in events:
                event["recorded_at"] = shifted(event["recorded_at"], hours=-1)
        else:
            i = 0
            for event in events:
                event["recorded_at"] = shifted(event["recorded_at"], days=365 * 3000)
        legal = how.startswith(("same instant", "all an hour"))
        return f"recorded_at {how}: events/{i} from {old} to {events[i]['recorded_at']}", Expect(not legal, None if legal else i)
    if kind == "event_seat":
        places = [(i, f) for i, e in enumerate(events) for f in SEAT_FIELDS if f in e["data"]]
        i, field = rng.choice(places)
        old = events[i]["data"][field]
        other = 1 - old if old in (0, 1) else rng.randrange(2)
        new = rng.choice([other, other, other, 2, -1, None, True, str(old)])
        events[i]["data"][field] = new
        return f"set events/{i}/data/{field} of {events[i]['type']} from {old!r} to {new!r}", Expect(True, i)
    if kind == "seats":
        seats, started = record["seats"], events[0]["data"]["seats"]
        where = rng.choice(["both", "both", "first event only", "record only"])
        s = rng.randrange(2)
        before = copy.deepcopy(started[s])
        verified = record.get("bots_version") == BOTS_VERSION
        new_started, new_seat = dict(started[s]), dict(seats[s])
        if started[s]["kind"] == "human":
            level = rng.choice(LEVELS)
            change = f"seat {s} a person made the {level} computer"
            new_started = {"kind": "computer", "level": level, "name": started[s].get("name"), "seed": rng.randrange(2**53)}
            new_seat = {**seats[s], "kind": "computer", "level": level}
            # Unverified (no version of this computer named), a person's moves may be called the computer's.
            impossible = where != "both" or verified
        else:
            what = rng.choice(["person", "level", "seed", "seed"])
            if what == "person":
                change = f"seat {s} the computer made a person"
                new_started = {"kind": "human", "name": started[s].get("name")}
                new_seat = {**seats[s], "kind": "human", "level": None}
                impossible = where != "both"
            elif what == "level":
                level = rng.choice([x for x in LEVELS if x != started[s]["level"]] + ["expert"])
                change = f"seat {s} level {started[s]['level']} -> {level}"
                new_started["level"] = new_seat["level"] = level
                impossible = where != "both" or level == "expert"
            else:
                seed = rng.choice([started[s]["seed"] + 1, started[s]["seed"] - 1, 0, 2**53, -1, str(started[s]["seed"])])
                change = f"seat {s} seed {started[s]['seed']} -> {seed!r}"
                new_started["seed"] = seed
                # Another seed may play the same moves (the hard computer barely uses it).
                impossible = where != "record only" and not (isinstance(seed, int) and 0 <= seed < 2**53)
        if where != "record only":
            started[s] = new_started
        if where != "first event only":
            seats[s] = new_seat
        return f"{change} ({where}; was {before})", Expect(impossible)
    if kind == "computer_discard":
        from service.engine import fold
        from service.records.records import upcast_events

        seat = computer_seats(record)[0]
        i = rng.choice([i for i, e in enumerate(events) if e["type"] == "card_discarded" and e["data"]["seat"] == seat])
        old = events[i]["data"]["card"]
        before = fold(upcast_events(events[:i]))
        others = [c for c in before.hands[seat] if c != old]
        new = rng.choice(others + ["AS", "KD"]) if rng.random() < 0.25 else rng.choice(others)
        if new == old:
            new = others[0]
        events[i]["data"]["card"] = new
        return f"the computer's discard events/{i} {old} -> {new}", Expect(True, i)
    if kind == "signature":
        how = rng.choice(["value", "value", "remove", "null", "key id unknown", "key id the target's", "algorithm", "signer"])
        signature = record["signature"]
        expect = Expect()
        if how == "value":
            value = signature["value"]
            j = rng.randrange(len(value) - 2)  # (the last character holds padding bits)
            signature["value"] = value[:j] + ("A" if value[j] != "A" else "B") + value[j + 1:]
            expect = Expect(code="signature_invalid")  # where the key is known
        elif how == "remove":
            del record["signature"]
        elif how == "null":
            record["signature"] = None
        elif how == "key id unknown":
            signature["key_id"] = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_-") for _ in range(43))
        elif how == "key id the target's":
            signature["key_id"] = target_kid
            expect = Expect(True, code="signature_invalid")
        elif how == "algorithm":
            signature["algorithm"] = rng.choice(["RS256", "none", ""])
        else:
            signature["signer"] = "https://forger.example.test"
        return f"signature: {how}", expect
    if kind == "bots_version":
        how = rng.choice(["1999.1", None, "", "absent", 7, BOTS_VERSION + ".1", "x" * 41])
        old = record.get("bots_version")
        if how == "absent":
            record.pop("bots_version", None)
        else:
            record["bots_version"] = how
        return f"bots_version {old!r} -> {how!r}", Expect(how == 7 or how == "x" * 41)
    changed, change = mutate(record, rng)
    record.clear()
    record.update(changed)
    return change, Expect()


#: Mutations per run (each an import of a whole match, replayed).
MUTATIONS = 120

#: How often each kind is tried (the computer's are tried on records against the computer).
KINDS = {
    "int_to_float": 6, "schema_version": 5, "recorded_at": 8, "event_seat": 6, "seats": 8, "computer_discard": 5,
    "signature": 6, "bots_version": 4, "generic": 3,
}


@pytest.fixture
def source(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED})
    app.extensions["gin_rummy"].play.deal_rng = random.Random("auditor-deals")  # the same deals every run
    return app.test_client()


def played_against_the_computer(client, monkeypatch, level, computer_seat, seed, target_score):
    """A finished match of Ann against the computer, every run the same play."""
    from tests.api.conftest import Player
    from tests.support.matches import play_to_the_end

    seats = [{"name": "Ann"}, {"name": "Ann"}]
    seats[computer_seat] = {"kind": "computer", "level": level}
    with monkeypatch.context() as m:
        m.setattr(secrets, "randbelow", lambda n: seed % n)  # the computer's seed
        created = client.post("/matches", json={"seats": seats, "rules": {"target_score": target_score}}).json
    person = 1 - computer_seat
    play_to_the_end({person: Player(client, created["id"], created["seats"][person]["token"])})
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json
    assert record["result"]["status"] == "finished" and record["bots_version"] == BOTS_VERSION
    assert record["events"][0]["data"]["seats"][computer_seat]["seed"] == seed
    return record


def test_an_auditors_mutations_are_refused_precisely_or_replay_to_what_they_claim(store, source, other_store, monkeypatch, tmp_path, capsys):
    started = time.perf_counter()
    records = []
    for seed, preset in enumerate(["classic", "bonus-20-10", "upcard-offer", "short-stock"]):
        start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"preset": preset, "target_score": 30})
        match = MatchFactory.create(store=store, start=start, seed=100 + seed)
        records.append(source.get(f"/matches/{match.match_id}/export", headers=OP).json)
    records.append(played_against_the_computer(source, monkeypatch, "easy", 1, seed=20261201, target_score=60))
    records.append(played_against_the_computer(source, monkeypatch, "hard", 0, seed=4242, target_score=30))
    assert all(r["signature"]["algorithm"] == "Ed25519" for r in records)  # exports are signed
    against_the_computer = [r for r in records if computer_seats(r)]

    jwks = tmp_path / "source-jwks.json"
    jwks.write_text(json.dumps(source.get("/.well-known/jwks.json").json))
    config = {"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}
    targets = {
        "trusting": create_app({**config, "TRUSTED_JWKS": str(jwks)}).test_client(),
        "stranger": create_app(config).test_client(),
    }
    target_kid = targets["stranger"].get("/.well-known/jwks.json").json["keys"][0]["kid"]

    setup = time.perf_counter() - started
    rng = random.Random("an-auditors-mutations-1")
    kinds = [k for k, n in KINDS.items() for _ in range(n)]
    accepted_as: dict[str, list[dict]] = {}  # match id -> contents of the records accepted under it
    tried = refused = accepted = changed_play = rewritten = 0
    problems = []  # (mutation, what went wrong)
    outcomes: dict[str, Counter] = {kind: Counter() for kind in KINDS}
    while tried < MUTATIONS:
        kind = rng.choice(kinds)
        original = rng.choice(against_the_computer if kind == "computer_discard" else records)
        record = copy.deepcopy(original)
        change, expect = an_auditors_mutation(record, rng, kind, target_kid)
        # Delivered as it is, with its digest recomputed (the digest is no secret), or as a
        # forger would: digest recomputed, under a new id, unsigned.
        delivery = "as changed" if kind == "signature" else rng.choice(["as changed", "digest recomputed", "forged"])
        if delivery != "as changed" and isinstance(record.get("events"), list):
            try:
                record["digest"]["value"] = digest_of(record["events"])
            except (KeyError, TypeError, ValueError):
                pass
        if delivery == "forged":
            record["match_id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            record.pop("signature", None)
        where = rng.choice(list(targets))
        mutation = f"{kind}: {change} [{delivery}, into the {where} service, from {original['match_id']}]"
        target = targets[where]
        tried += 1
        counts = rows(other_store)
        r = target.post("/matches/import", json=record)
        match_id = record.get("match_id")
        try:
            valid_id = str(uuid.UUID(match_id)) == match_id
        except (TypeError, ValueError, AttributeError):
            valid_id = False
        if r.status_code >= 500 or r.status_code not in (200, 201, 409, 422):
            problems.append((mutation, f"answered {r.status_code}: {r.get_data(as_text=True)[:500]}"))
            continue
        there = target.get(f"/matches/{match_id}/export", headers=OP) if valid_id else None
        outcomes[kind][r.json.get("code", "accepted") if r.status_code in (409, 422) else f"accepted {r.status_code}"] += 1
        if r.status_code in (409, 422):
            refused += 1
            body = r.json
            if r.mimetype != "application/problem+json" or not body.get("code") or not body.get("detail"):
                problems.append((mutation, f"a refusal without a problem document: {r.status_code} {body}"))
            if body.get("code") == "illegal_event":
                if not (isinstance(body.get("index"), int) and not isinstance(body["index"], bool)
                        and body.get("seq") == body["index"] + 1 and body.get("rule")):
                    problems.append((mutation, f"illegal_event without index, seq and rule: {body}"))
            if expect.index is not None and body.get("code") in ("invalid_record", "illegal_event") and body.get("index") != expect.index:
                problems.append((mutation, f"refused elsewhere than at the change (events[{expect.index}]): {body}"))
            if expect.code is not None and delivery == "as changed" and where == "trusting" and body.get("code") != expect.code:
                problems.append((mutation, f"refused as {body.get('code')}, not {expect.code}: {body}"))
            if (r.status_code == 409) != (body.get("code") == "match_exists"):
                problems.append((mutation, f"status {r.status_code} with code {body.get('code')}"))
            # Nothing half-written: the match is absent, or exactly a record accepted before.
            if rows(other_store) != counts:
                problems.append((mutation, f"refused ({body.get('code')}) but rows were written: {counts} -> {rows(other_store)}"))
            if there is not None and there.status_code != 404 and content(there.json) not in accepted_as.get(match_id, ()):
                problems.append((mutation, f"refused ({body.get('code')}) but the target holds another match under its id"))
            continue
        accepted += 1
        # Stored under the record's own id only when its signature verifies here; an
        # unsigned or untrusted record under an id of its own (never the genuine one's).
        verified = r.json["provenance"]["signature"]["status"] == "verified"
        if r.json["record_id"] != match_id or (r.json["id"] == match_id) != verified:
            problems.append((mutation, f"accepted ({r.status_code}) as {r.json['id']} (record {r.json['record_id']}), signature {verified=}"))
        match_id = r.json["id"]
        there = target.get(f"/matches/{match_id}/export", headers=OP)
        if expect.refused:
            problems.append((mutation, f"accepted ({r.status_code}) though it does not replay to what it claims: it cannot be legal"))
        if expect.code is not None and where == "trusting":
            problems.append((mutation, f"accepted ({r.status_code}), not refused as {expect.code}"))
        if there is None or there.status_code != 200:
            problems.append((mutation, f"accepted ({r.status_code}) but not exported: {there and there.status_code}"))
            continue
        exported = there.json
        # Legal after all: it replays to exactly what it claims.
        if r.status_code == 200:
            # Already here (an earlier accepted record with the same events): the match
            # stays as it is, so only what the digest covers must agree.
            if content(exported) not in accepted_as.get(match_id, ()):
                problems.append((mutation, "answered 200 (already here) for a match accepted from no earlier record"))
            if digest_of(exported["events"]) != digest_of(record["events"]) or exported["result"] != record["result"]:
                problems.append((mutation, "accepted (200) though it does not replay to what it claims"))
            continue
        if untimed(exported["events"]) != untimed(record["events"]) or exported["result"] != record["result"]:
            first = next((i for i, (a, b) in enumerate(zip(exported["events"], record["events"])) if a != b), None)
            problems.append((mutation, f"accepted though it does not replay to what it claims (first difference at events[{first}]: "
                                       f"{first is not None and exported['events'][first]} vs {first is not None and record['events'][first]})"))
        elif exported["events"] != record["events"]:
            rewritten += 1  # the same instants, written otherwise: see the report
            if not same_instants(exported["events"], record["events"]):
                problems.append((mutation, "accepted, but exported with other recorded_at times"))
        if exported["match_id"] != match_id:
            problems.append((mutation, f"accepted as {match_id}, but exported as {exported['match_id']}"))
        for field in ("rules", "seats", "digest"):
            if exported[field] != record[field]:
                problems.append((mutation, f"accepted, but its {field} was exported otherwise: {exported[field]} vs {record[field]}"))
        claimed = record.get("bots_version") if computer_seats(record) else None
        if exported["bots_version"] != claimed:
            problems.append((mutation, f"accepted, but its bots_version was exported as {exported['bots_version']!r} (the record said {claimed!r})"))
        moves = r.json["provenance"]["computer_moves"]
        expected = ("verified" if record.get("bots_version") == BOTS_VERSION else "unverified") if computer_seats(record) else None
        if moves != expected:
            problems.append((mutation, f"accepted with computer moves {moves!r}, expected {expected!r}"))
        signature = r.json["provenance"]["signature"]["status"]
        if isinstance(record.get("signature"), dict):
            known = record["signature"].get("key_id") == original["signature"]["key_id"] and where == "trusting"
            if signature != ("verified" if known else "unknown_key"):
                problems.append((mutation, f"accepted with the signature {r.json['provenance']['signature']}"))
        elif signature != "unsigned":
            problems.append((mutation, f"accepted unsigned, but the signature is {r.json['provenance']['signature']}"))
        if accepted_as.get(match_id):
            problems.append((mutation, "a second match created (201) under an id already taken"))
        accepted_as.setdefault(match_id, []).append(content(exported))
        changed_play += digest_of(record["events"]) != digest_of(original["events"])

    illegal = len({m for m, p in problems if "does not replay" in p})
    with capsys.disabled():
        print(
            f"\nmutations: {tried} tried, {refused} refused, {accepted - illegal} accepted and legal "
            f"({changed_play} with changed play, {rewritten} with recorded_at rewritten), "
            f"{illegal} accepted though illegal, "
            f"{sum('answered 5' in p for _, p in problems)} 5xx, "
            f"{sum('written' in p or 'another match' in p for _, p in problems)} partial writes, "
            f"{len(problems)} problems in all; {time.perf_counter() - started:.1f} s ({setup:.1f} s to play the records)"
        )
        for kind, seen in outcomes.items():
            print(f"  {kind:<16} " + ", ".join(f"{code} {n}" for code, n in seen.most_common()))
    assert tried >= 40, tried
    assert not problems, "\n".join(f"{m}\n    -> {p}" for m, p in problems)
    assert refused > tried // 2 and accepted >= 1, (refused, accepted)


# --- what the auditor's mutations found ---------------------------------------------------------


def test_a_verified_signature_does_not_vouch_for_a_signer_the_record_made_up(store, source, other_store, tmp_path):
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 30})
    record = source.get(f"/matches/{MatchFactory.create(store=store, start=start, seed=7).match_id}/export", headers=OP).json
    jwks = tmp_path / "source-jwks.json"
    jwks.write_text(json.dumps(source.get("/.well-known/jwks.json").json))
    trusting = create_app({"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, "TRUSTED_JWKS": str(jwks)})
    record["signature"]["signer"] = "https://forger.example.test"  # outside what is signed
    r = trusting.test_client().post("/matches/import", json=record)
    assert r.status_code == 201 and r.json["provenance"]["signature"]["status"] == "verified"
    assert r.json["provenance"]["signature"]["signer"] == str(jwks)  # the trusted key set, not the record's claim


def test_an_imported_records_times_are_exported_as_they_came_or_refused(store, source, other_store):
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 30})
    record = source.get(f"/matches/{MatchFactory.create(store=store, start=start, seed=8).match_id}/export", headers=OP).json
    del record["signature"]
    record["events"][3]["recorded_at"] = record["events"][3]["recorded_at"].replace("+00:00", "Z")  # the same instant
    record["events"][4]["recorded_at"] = as_offset(record["events"][4]["recorded_at"], 5, 30)  # the same instant
    target = create_app({"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    # The same instants written otherwise would be exported in UTC, not as they came: refused.
    r = target.post("/matches/import", json=record)
    assert r.status_code == 422 and r.json["index"] == 3 and "must be written in UTC" in r.json["detail"], r.json
    record["events"][3]["recorded_at"] = record["events"][3]["recorded_at"].replace("Z", "+00:00")
    r = target.post("/matches/import", json=record)
    assert r.status_code == 422 and r.json["index"] == 4, r.json
    record["events"][4]["recorded_at"] = datetime.fromisoformat(record["events"][4]["recorded_at"]).astimezone(UTC).isoformat()
    r = target.post("/matches/import", json=record)
    assert r.status_code == 201 and r.json["record_id"] == record["match_id"], r.json
    exported = target.get(f"/matches/{r.json['id']}/export", headers=OP).json  # unsigned: an id of its own
    assert exported["events"] == record["events"]  # "its export holds the record's events exactly" (README)

"""Retrying requests: numbers in headers too long for Python, joins and rematches sent
again with their Idempotency-Key, and replayed answers given as they were first given."""

from __future__ import annotations


def test_an_if_match_or_last_event_id_of_thousands_of_digits_is_a_4xx_not_a_500(client, new_match):
    data, players = new_match()
    me = players[0]
    digits = "9" * 4301  # one more than Python's int() reads from text
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{digits}"'})
    assert (r.status_code, r.json["code"]) == (400, "invalid_if_match")
    # 19 digits: more than any version has (at most 18), refused the same way.
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": '"1' + "0" * 18 + '"'})
    assert (r.status_code, r.json["code"]) == (400, "invalid_if_match")
    assert me.view()["version"] == data["version"]  # nothing was written
    r = me.client.get(f"/matches/{data['id']}/stream?wait=0", headers={**me.headers, "Last-Event-ID": digits})
    assert (r.status_code, r.json["code"]) == (422, "invalid_request")
    r = me.client.get("/", headers={"X-Code": digits})  # an ingress's status: a bad one is a 502
    assert (r.status_code, r.json["code"]) == (502, "service_unreachable")

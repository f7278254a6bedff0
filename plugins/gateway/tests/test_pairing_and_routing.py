"""DM pairing's limits, letting imported users in, and which session a message belongs to."""

from __future__ import annotations

import pytest
from hermes_plugin_gateway.pairing import CODE_ALPHABET, PairingError, Pairings, admit
from hermes_plugin_gateway.routing import route_key, user_scope

from hermes_sdk.archive import PairedUser

from .conftest import Clock, inbound


def test_a_code_is_eight_unambiguous_characters(store):
    code = Pairings(store).request("telegram", "1", "@ann")
    assert code is not None and len(code) == 8 and set(code) <= set(CODE_ALPHABET)


def test_one_code_per_user_per_ten_minutes(store):
    clock = Clock()
    pairings = Pairings(store, clock)
    first = pairings.request("telegram", "1", "@ann")
    assert pairings.request("telegram", "1", "@ann") is None
    clock.now += 601
    second = pairings.request("telegram", "1", "@ann")
    assert second is not None and second != first
    assert [r.code for r in pairings.pending()] == [second]  # the old code is gone


def test_at_most_three_wait_per_platform(store):
    pairings = Pairings(store)
    assert all(pairings.request("telegram", str(n), "") for n in range(3))
    assert pairings.request("telegram", "4", "") is None
    assert pairings.request("discord", "4", "") is not None  # per platform


def test_codes_expire_after_an_hour(store):
    clock = Clock()
    pairings = Pairings(store, clock)
    code = pairings.request("telegram", "1", "")
    clock.now += 3601
    with pytest.raises(PairingError, match="expired after an hour"):
        pairings.approve("telegram", code)
    assert not pairings.is_paired("telegram", "1")


def test_five_failures_lock_approving_for_an_hour(store):
    clock = Clock()
    pairings = Pairings(store, clock)
    code = pairings.request("telegram", "1", "")
    for _ in range(5):
        with pytest.raises(PairingError, match="no waiting request"):
            pairings.approve("telegram", "WRONGONE")
    with pytest.raises(PairingError, match="locked for 60 more minutes"):
        pairings.approve("telegram", code)  # even the right code
    with pytest.raises(PairingError, match="no waiting request"):
        pairings.approve("discord", "XXXXXXXX")  # other platforms are not locked
    clock.now += 3601
    with pytest.raises(PairingError, match="expired"):
        pairings.approve("telegram", code)  # unlocked, but the code has expired meanwhile


def test_approval_is_case_and_space_tolerant_and_revocable(store):
    pairings = Pairings(store)
    code = pairings.request("telegram", "1", "@ann")
    user = pairings.approve("telegram", f" {code[:4].lower()} {code[4:]} ")
    assert (user.user_id, user.user_name) == ("1", "@ann")
    assert pairings.is_paired("telegram", "1") and pairings.pending() == []
    assert pairings.revoke("telegram", "1") and not pairings.is_paired("telegram", "1")


def test_imported_users_are_let_in_once(home, store):
    users = [PairedUser("telegram", "42", "ada", 5.0), PairedUser("telegram", "43", "", 6.0)]
    assert admit(home, users) == users
    assert admit(home, users) == []  # a second import adds nothing
    pairings = Pairings(store)
    assert pairings.is_paired("telegram", "42") and pairings.is_paired("telegram", "43")
    assert [u.user_name for u in pairings.paired()] == ["ada", ""]


def test_routing_keys_and_scopes():
    dm = inbound()
    assert (
        route_key(dm) == "telegram:dm:5" and user_scope(dm.chat, "5", route_key(dm)) == "telegram:5"
    )
    group = inbound("group", "-9", "5")
    assert route_key(group) == "telegram:group:-9:5"
    assert user_scope(group.chat, "5", route_key(group)) == "telegram:5"
    assert route_key(group, "shared") == "telegram:group:-9"
    assert user_scope(group.chat, "5", "telegram:group:-9") == "telegram:chat:-9"
    topic = inbound("group", "-9", "5", thread="3")
    assert route_key(topic) == "telegram:thread:-9:3"
    assert user_scope(topic.chat, "5", route_key(topic)) == "telegram:chat:-9"

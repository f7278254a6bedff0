"""The store side of an import: sessions under their own ids, parents before children, all
of a batch or none of it, idempotent, searchable at once, and the view a resumed session
continues from."""

from __future__ import annotations

import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.store.archive import StoreArchive
from hermes_kernel.store.state import StateStore
from hermes_sdk.archive import ArchivedMessage, ArchivedSession, PairedUser
from hermes_sdk.models import ToolCallRequest


def nobody_keeps_access(users):
    return None  # no plugin keeps chat access in these tests


def message(role, content, at, **fields):
    return ArchivedMessage(role=role, content=content, created_at=at, **fields)


def session(session_id, *messages, **fields):
    fields.setdefault("source", "cli")
    return ArchivedSession(id=session_id, started_at=1.0, messages=messages, **fields)


CALL = ToolCallRequest("call_0", "terminal", '{"command": "ls"}')
PARENT = session(
    "20250101_000000_aaaaaa",
    message("user", "list the quokka files", 1.0),
    message("assistant", "", 1.1, tool_calls=(CALL,)),
    message("tool", "quokka.txt", 1.2, tool_call_id="call_0", tool_name="terminal"),
    message("assistant", "There is one.", 1.3),
    title="Quokkas",
    input_tokens=100,
    output_tokens=10,
    cost_usd=None,
)
CHILD = session(
    "20250101_000001_bbbbbb",
    message("user", "a goal", 2.0),
    source="delegate",
    parent_session_id=PARENT.id,
)


@pytest.fixture
def store(tmp_path):
    opened = StateStore(Database(tmp_path / "state.db"))
    yield opened
    opened.close()


def test_sessions_keep_their_ids_links_and_usage(store):
    archive = StoreArchive(store.db, nobody_keeps_access)
    assert archive.add([CHILD, PARENT]) == 2  # the child first: it is placed after its parent
    parent, child = store.sessions.get(PARENT.id), store.sessions.get(CHILD.id)
    assert child.parent_session_id == PARENT.id and child.source == "delegate"
    assert parent.title == "Quokkas" and parent.message_count == 4 and parent.tool_call_count == 1
    assert (parent.input_tokens, parent.output_tokens, parent.unpriced_calls) == (100, 10, 1)
    assert parent.system_prompt is None  # built here at its first turn
    stored = store.messages.of_session(PARENT.id)
    assert [m.seq for m in stored] == [1, 2, 3, 4]
    assert stored[1].tool_calls == [
        {"id": "call_0", "name": "terminal", "arguments": '{"command": "ls"}'}
    ]
    assert [hit.session_id for hit in store.search("quokka")] == [PARENT.id, PARENT.id]


def test_adding_again_adds_nothing_and_a_missing_parent_is_no_link(store):
    archive = StoreArchive(store.db, nobody_keeps_access)
    assert archive.add([CHILD]) == 1
    assert store.sessions.get(CHILD.id).parent_session_id is None  # its parent is not stored
    assert archive.add([PARENT, CHILD]) == 1
    assert archive.stored([PARENT.id, CHILD.id, "nope"]) == {PARENT.id, CHILD.id}


def test_a_bad_record_writes_nothing_of_its_batch(store):
    bad = session("20250101_000002_cccccc", message("narrator", "?", 3.0))
    with pytest.raises(ValueError, match="message 1 has role 'narrator'"):
        StoreArchive(store.db, nobody_keeps_access).add([PARENT, bad])
    assert store.sessions.count() == 0


def test_what_the_other_tool_compacted_is_history_not_view(store):
    compacted = session(
        "20250101_000003_dddddd",
        message("user", "old", 1.0),
        message("assistant", "older answer", 1.1),
        message("user", "Summary of earlier turns: ...", 1.2),
        message("assistant", "continuing", 1.3),
        view_starts_at=2,
    )
    StoreArchive(store.db, nobody_keeps_access).add([compacted])
    record = store.compactions.latest(compacted.id)
    assert record is not None and record.boundary_seq == 2 and record.engine == "import"
    assert len(store.messages.of_session(compacted.id)) == 4  # all kept, all searchable


def test_paired_users_go_to_the_plugin_that_keeps_chat_access(store):
    users = [PairedUser("telegram", "42", "ada", 5.0), PairedUser("telegram", "43", "", 6.0)]
    handed: list[list[PairedUser]] = []

    def admit(given):
        handed.append(list(given))
        return 1  # one was new there

    assert StoreArchive(store.db, admit).add_paired(users) == 1
    assert handed == [users]
    assert StoreArchive(store.db, admit).add_paired([]) == 0 and len(handed) == 1


def test_paired_users_with_nobody_to_keep_them_are_refused_in_one_line(store):
    archive = StoreArchive(store.db, nobody_keeps_access)
    with pytest.raises(OSError, match="no installed plugin keeps who may write from chat"):
        archive.add_paired([PairedUser("telegram", "42", "ada", 5.0)])

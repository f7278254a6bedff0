"""What a front-end shows of the whole agent, through the kernel's runtime as a plugin sees
it (hermes_sdk.runtime.open_runtime): the lines ``hermes status`` prints, the plugins as
``hermes plugins list`` has them, and the writes waiting for approval in every queue (the
memory and skills plugins' ``hermes_pending_writes``), approved and rejected."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hermes_commons.proposals import UnknownProposal
from hermes_sdk import PendingWritesSpec
from hermes_sdk.pending_writes import PendingContext, PendingWrites
from hermes_sdk.runtime import Runtime, SessionOptions, StatusLine, open_runtime
from hermes_testkit import Reply
from hermes_testkit.frontend_tests import scripted_home

HERMES = str(Path(sys.executable).parent / "hermes")
SKILL = "---\nname: db-backup\ndescription: Back up the database nightly.\n---\n1. Run pg_dump.\n"


@pytest.fixture
def home(tmp_path, openai_server, monkeypatch) -> Path:
    home = scripted_home(tmp_path, openai_server, monkeypatch)
    with (home / "config.yaml").open("a", encoding="utf-8") as config:
        config.write(
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
            "memory:\n  write_approval: true\nskills:\n  write_approval: true\n"
        )
    return home


def hermes(*args: str) -> str:
    run = subprocess.run(
        [HERMES, *args], env=dict(os.environ), capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def printed(lines: list[StatusLine]) -> list[str]:
    """``lines`` as ``hermes status`` prints them."""
    out = []
    for line in lines:
        out.append(f"{line.label + ':':<12} {line.text}")
        out += [" " * 13 + detail for detail in line.details]
    return out


def test_status_is_what_hermes_status_prints(home):
    async def scenario():
        async with open_runtime(home) as runtime:
            return await runtime.status()

    lines = asyncio.run(scenario())
    labels = [line.label for line in lines]
    assert labels[:4] == ["Home", "Model", "Backend", "Plugins"]
    assert labels[-2:] == ["Sessions", "Disk"]
    assert lines[0].text.startswith(f"{home}  (profile ")
    assert lines[1].text == "local-endpoint / test-model  (model.base_url in config)"
    assert "Gateway" in labels[4:-2], "each plugin's own lines, between Plugins and Sessions"
    assert lines[-2].text == "0 stored"
    shown = hermes("status").splitlines()
    ours = printed(lines)
    # The same lines; only the disk's size may have moved since (the store was closed).
    assert [s for s in shown if not s.startswith("Disk:")] == [
        o for o in ours if not o.startswith("Disk:")
    ]
    assert any(s.startswith("Disk:") for s in shown)


def test_plugins_are_what_hermes_plugins_list_shows(home, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "voice")

    async def scenario():
        async with open_runtime(home) as runtime:
            await runtime.pending_writes()  # loads the plugins that keep queues
            return runtime.plugins()

    states = {state.name: state for state in asyncio.run(scenario())}
    listed = {row["name"]: row for row in json.loads(hermes("plugins", "list", "--json"))}
    assert set(states) == set(listed)
    for name, state in states.items():
        row = listed[name]
        assert (state.distribution, state.version, state.summary, state.reason) == (
            row["distribution"],
            row["version"],
            row["summary"],
            row["reason"],
        )
        assert state.isolated == row["isolated"]
    voice = states["voice"]
    assert voice.state == "disabled" and voice.reason == listed["voice"]["reason"]
    assert voice.load_ms is None and voice.error is None and voice.run_time is None
    memory = states["memory-builtin"]
    assert memory.state == "loaded" and memory.load_ms is not None and memory.error is None
    assert "pending.memory" in memory.provides and "tool.memory" in memory.provides
    assert list(states) == sorted(states)


def _turn_that_proposes(openai_server) -> None:
    openai_server.queue(
        Reply.tool_call("memory", {"action": "add", "target": "user", "content": "Prefers tea."}),
        Reply.tool_call(
            "skill_manage", {"action": "create", "name": "db-backup", "content": SKILL}
        ),
        Reply.say("Both wait for your approval."),
    )


def test_pending_writes_of_every_queue_are_shown_and_decided(home, openai_server):
    _turn_that_proposes(openai_server)

    async def scenario(runtime: Runtime):
        session = await runtime.open_session(SessionOptions(source="web"))
        ended = await runtime.start_turn(session.session_id, "remember this").result()
        assert ended.ok, ended.error
        writes = await runtime.pending_writes()
        assert await runtime.pending_writes(user_scope="telegram:42") == []
        memory, skill = writes
        approved = await runtime.decide_pending_write("memory", memory.id, approve=True)
        rejected = await runtime.decide_pending_write("skills", skill.id, approve=False)
        with pytest.raises(UnknownProposal, match="no queue of pending writes named 'notes'"):
            await runtime.decide_pending_write("notes", memory.id, approve=True)
        with pytest.raises(UnknownProposal, match=f"no pending memory write {memory.id}"):
            await runtime.decide_pending_write("memory", memory.id, approve=False)
        return writes, approved, rejected, await runtime.pending_writes()

    async def run():
        async with open_runtime(home) as runtime:
            return await scenario(runtime)

    writes, approved, rejected, after = asyncio.run(run())
    memory, skill = writes
    assert [w.queue for w in writes] == ["memory", "skills"], "oldest first"
    assert memory.title == "add to USER.md: Prefers tea." and memory.source == "web"
    assert "+++ b/memories/USER.md\n" in memory.diff and "+Prefers tea.\n" in memory.diff
    assert skill.title == "create db-backup: write SKILL.md"
    assert "+++ b/db-backup/SKILL.md\n" in skill.diff and "+1. Run pg_dump.\n" in skill.diff
    assert approved.startswith(f"approved {memory.id}")
    assert (home / "memories/USER.md").read_text() == "Prefers tea.\n"
    assert rejected == f"rejected {skill.id}; nothing was changed"
    assert not (home / "skills/db-backup").exists()
    assert after == []


class _Broken:
    """A queue whose plugin fails: it raises, or it hangs past the deadline."""

    def __init__(self, hang: threading.Event | None) -> None:
        self.hang = hang

    def pending(self) -> list:
        if self.hang is not None:
            self.hang.wait(10)
            return []
        raise OSError("the queue's folder is gone")

    def approve(self, write_id: str) -> str:
        self.pending()  # fails or hangs the same way
        return f"approved {write_id}"

    def reject(self, write_id: str) -> str:
        self.pending()
        return f"rejected {write_id}"


def test_a_queue_that_fails_is_left_out_and_named_in_the_warnings(home, openai_server):
    config = home / "config.yaml"
    config.write_text(config.read_text() + "plugins:\n  hook_timeout_seconds: 1\n")
    _turn_that_proposes(openai_server)
    release = threading.Event()

    def broken(context: PendingContext) -> PendingWrites:
        return _Broken(None)

    def hanging(context: PendingContext) -> PendingWrites:
        return _Broken(release)

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="web"))
            await runtime.start_turn(session.session_id, "remember this").result()
            # Two more queues, as two loaded plugins would have registered them (in
            # the kernel's plugin host: the runtime is the kernel's KernelRuntime).
            runtime.app.host.index.add_all(
                "broken", [PendingWritesSpec(name="broken", factory=broken)]
            )
            runtime.app.host.index.add_all(
                "hanging", [PendingWritesSpec(name="hanging", factory=hanging)]
            )
            writes = await runtime.pending_writes()
            warnings = list(runtime.warnings())
            with pytest.raises(TimeoutError, match="'hanging' queue did not answer within 1 s"):
                await runtime.decide_pending_write("hanging", "abc123", approve=True)
            release.set()
            return writes, warnings

    writes, warnings = asyncio.run(scenario())
    assert [w.queue for w in writes] == ["memory", "skills"], "the working queues still show"
    assert (
        "the pending writes of 'broken' cannot be listed: OSError: the queue's folder is gone"
        in warnings
    )
    assert "the pending writes of 'hanging' cannot be listed: no answer within 1 s" in warnings

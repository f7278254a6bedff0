"""The runtime's administration facet (issue 75) on a real home, in process: config.yaml's
sections typed by their owners, changes previewed and saved with their comments kept and
refused with the CLI's lines, .env secrets never shown, logs read on from a cursor through
rotation with their secrets redacted, profiles, plugins enabled, and the panels listed."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hermes_commons.dotenv import read_dotenv
from hermes_sdk.runtime import Runtime, open_runtime

T = TypeVar("T")

CONFIG = "# my settings\nagent:\n  retries: 2   # two is enough\nweb_ui:\n  port: 8650\n"
SECRET = "sk-live-a1b2c3d4e5f6a7b8c9d0e1f2a3b4"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (home / ".env").write_text(f"EXAMPLE_API_KEY={SECRET}\nSHORT_TOKEN=abc\n", encoding="utf-8")
    (home / ".env").chmod(0o600)
    monkeypatch.delenv("HERMES_PROFILE", raising=False)
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def run(home: Path, work: Callable[[Runtime], Awaitable[T]]) -> T:
    async def main() -> T:
        async with open_runtime(home) as runtime:
            return await work(runtime)

    return asyncio.run(main())


def test_sections_are_typed_by_their_owners(home: Path) -> None:
    sections = {s.name: s for s in run(home, lambda rt: rt.config_sections())}
    agent = {f.key: f for f in sections["agent"].fields}
    assert sections["agent"].owner == "kernel"
    assert agent["agent.retries"].type == "int"
    assert agent["agent.retries"].value == "2" and agent["agent.retries"].is_set
    assert agent["agent.retries"].default == "3"
    assert "Attempts per provider" in agent["agent.retries"].description
    approvals = {f.key: f for f in sections["approvals"].fields}
    assert approvals["approvals.mode"].type == "choice"
    assert approvals["approvals.mode"].choices == ("manual", "smart", "off")
    web = {f.key: f for f in sections["web_ui"].fields}
    assert sections["web_ui"].owner == "web-ui"
    assert web["web_ui.enabled"].type == "bool"
    assert "hosts the web UI" in web["web_ui.enabled"].description  # an attribute docstring
    platforms = sections["platforms"].fields  # a mapping of entries: one YAML field
    assert [f.key for f in platforms] == ["platforms"] and platforms[0].type == "yaml"


def test_a_change_is_previewed_then_saved_with_the_comments_kept(home: Path) -> None:
    changes: dict[str, str | None] = {"agent.retries": "5", "web_ui.port": None}

    async def preview_then_save(runtime: Runtime) -> tuple[Any, Any]:
        preview = await runtime.change_config(changes, save=False)
        assert (home / "config.yaml").read_text() == CONFIG  # a preview writes nothing
        return preview, await runtime.change_config(changes, save=True)

    preview, saved = run(home, preview_then_save)
    assert "-  retries: 2   # two is enough" in preview.diff
    assert "+  retries: 5   # two is enough" in preview.diff
    assert "-  port: 8650" in preview.diff
    assert saved.diff == preview.diff
    text = (home / "config.yaml").read_text()
    assert text.startswith("# my settings\n") and "retries: 5   # two is enough" in text
    assert "web_ui" not in text  # the section it left empty goes too


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"agent.retries": "lots"}, "agent.retries: "),
        ({"agent.retires": "4"}, "rename it to 'retries'"),
        ({"model.api_key": '"sk-x"'}, "looks like a secret"),
        ({"agent.retries.deeper": "1"}, "agent.retries is a value, not a section"),
        ({"not a key": "1"}, "is not a dotted key"),
        ({}, "nothing to change"),
    ],
)
def test_a_bad_change_is_one_line_and_changes_nothing(
    home: Path, changes: dict[str, str | None], said: str
) -> None:
    async def change(runtime: Runtime) -> None:
        await runtime.change_config(changes, save=True)

    with pytest.raises(ValueError, match=None) as refused:
        run(home, change)
    assert said in str(refused.value)
    assert "\n" not in str(refused.value)
    assert (home / "config.yaml").read_text() == CONFIG


def test_secrets_are_masked_and_set_in_dotenv(home: Path) -> None:
    async def work(runtime: Runtime) -> tuple[Any, str, Any]:
        before = await runtime.secrets()
        said = await runtime.set_secret("NEW_SERVICE_KEY", "value-of-the-new-key-42")
        with pytest.raises(ValueError, match="not a variable name"):
            await runtime.set_secret("new key", "x")
        with pytest.raises(ValueError, match="one line"):
            await runtime.set_secret("OTHER_KEY", "two\nlines")
        return before, said, await runtime.secrets()

    before, said, after = run(home, work)
    shown = {s.name: s.shown for s in before}
    assert SECRET not in str(before)
    assert shown["EXAMPLE_API_KEY"] == f"…{SECRET[-4:]} ({len(SECRET)} characters)"
    assert shown["SHORT_TOKEN"] == "•••••"  # too short to show any of it
    assert "NEW_SERVICE_KEY saved" in said
    assert "value-of-the-new-key-42" not in str(after)
    assert read_dotenv(home / ".env")["NEW_SERVICE_KEY"] == "value-of-the-new-key-42"
    assert (home / ".env").stat().st_mode & 0o777 == 0o600


def test_a_log_is_read_on_from_its_cursor_filtered_and_redacted(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir()
    log = logs / "agent.log"
    log.write_text(
        "2026-12-07 10:00:00,000 INFO hermes.runtime: started\n"
        "2026-12-07 10:00:01,000 WARNING hermes.cron: a job was missed\n"
        "Traceback (most recent call last):\n"
        "2026-12-07 10:00:02,000 DEBUG hermes.web_ui: quiet\n"
    )

    async def work(runtime: Runtime) -> list[Any]:
        reads = [await runtime.read_log("agent", level="warning")]
        with log.open("a") as out:
            out.write(f"2026-12-07 10:00:03,000 ERROR hermes.cron: key {SECRET} refused\n")
            out.write("2026-12-07 10:00:04,000 ERROR hermes.cron: half a li")  # still writing
        reads.append(await runtime.read_log("agent", reads[0].cursor, level="warning"))
        reads.append(await runtime.read_log("agent", "", component="hermes.web_ui"))
        os.replace(log, logs / "agent.log.1")  # rotated: a new, shorter file
        log.write_text("2026-12-07 10:00:05,000 WARNING hermes.cron: after rotation\n")
        reads.append(await runtime.read_log("agent", reads[1].cursor, level="warning"))
        with pytest.raises(ValueError, match="no log named"):
            await runtime.read_log("../../etc/passwd")
        return reads

    first, more, web, rotated = run(home, work)
    assert [line[0] for line in first.lines] == [
        "2026-12-07 10:00:01,000 WARNING hermes.cron: a job was missed",
        "Traceback (most recent call last):",  # with its record
    ]
    assert first.lines[1][1:] == ("WARNING", "hermes.cron")
    assert len(more.lines) == 1 and SECRET not in more.lines[0][0]
    assert "refused" in more.lines[0][0]
    assert [line[0].rsplit(": ", 1)[1] for line in web.lines] == ["quiet"]
    assert [line[0] for line in rotated.lines] == [
        "2026-12-07 10:00:05,000 WARNING hermes.cron: after rotation"
    ]


def test_profiles_and_plugins(home: Path) -> None:
    async def work(runtime: Runtime) -> tuple[str, Any, str, str]:
        made = await runtime.create_profile("work", clone=True)
        with pytest.raises(ValueError, match="already exists"):
            await runtime.create_profile("work", clone=False)
        with pytest.raises(ValueError, match="no profile 'play'"):
            await runtime.use_profile("play")
        used = await runtime.use_profile("work")
        listed = await runtime.profiles()
        disabled = await runtime.set_plugin_enabled("voice", False)
        with pytest.raises(ValueError, match="no installed plugin named 'nope'"):
            await runtime.set_plugin_enabled("nope", True)
        return made, listed, used, disabled

    made, listed, used, disabled = run(home, work)
    assert "created profile work" in made and ".env" in made
    assert (home / "profiles" / "work" / ".env").stat().st_mode & 0o777 == 0o600
    assert "using profile work" in used
    assert (home / "active_profile").read_text() == "work\n"
    by_name = {p.name: p for p in listed}
    assert by_name["work"].active and not by_name["default"].active
    assert by_name["default"].current and not by_name["work"].current
    assert "voice: disabled" in disabled
    assert (
        "disabled:\n  - voice" in (home / "config.yaml").read_text()
        or "[voice]" in (home / "config.yaml").read_text()
    )


def test_the_panels_are_listed_in_order_and_an_unknown_one_is_one_line(home: Path) -> None:
    async def work(runtime: Runtime) -> tuple[list[Any], Any]:
        listed = await runtime.panels()
        panel = await runtime.panel("settings")
        again = await runtime.panel("settings")
        assert panel is again  # built once
        with pytest.raises(KeyError, match="no dashboard panel named 'nope'"):
            await runtime.panel("nope")
        return listed, await panel.view({"section": "agent"})

    listed, view = run(home, work)
    names = [p.name for p in listed]
    assert names[0] == "settings" and {"cron", "gateway", "skills", "logs"} <= set(names)
    orders = [p.order for p in listed]
    assert orders == sorted(orders)
    assert view.sections[0].title == "agent (kernel)"


def test_a_burst_is_read_in_parts_never_skipped(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir()
    log = logs / "agent.log"
    log.write_text("2026-12-07 10:00:00,000 INFO hermes.runtime: start\n")

    async def work(runtime: Runtime) -> list[str]:
        first = await runtime.read_log("agent")
        with log.open("a") as out:
            for n in range(450):
                out.write(f"2026-12-07 10:00:01,000 INFO hermes.runtime: line {n}\n")
        seen: list[str] = []
        cursor = first.cursor
        for _ in range(4):
            read = await runtime.read_log("agent", cursor, limit=200)
            seen += [text.rsplit(" ", 1)[1] for text, _, _ in read.lines]
            cursor = read.cursor
        return seen

    assert run(home, work) == [str(n) for n in range(450)]


def test_a_bool_that_may_be_unset_is_a_choice_of_three(home: Path) -> None:
    sections = {s.name: s for s in run(home, lambda rt: rt.config_sections())}
    vision = {f.key: f for f in sections["model"].fields}["model.vision"]
    assert (vision.type, vision.choices, vision.value) == ("choice", ("", "true", "false"), "")


def test_run_now_without_a_gateway_runs_here_then_lets_the_scheduler_lock_go(
    home: Path, openai_server: Any
) -> None:
    """Standalone (``hermes web`` with no gateway), **Run now** runs the job in this
    process: the run completes, a run asked for meanwhile by another process is served,
    and the scheduler lock is free again after."""
    from hermes_plugin_cron.jobs import JobStore
    from hermes_plugin_cron.runs import RunLog
    from hermes_plugin_cron.scheduler import scheduler_lock

    from hermes_testkit import Reply

    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\n"
    )
    openai_server.queue(Reply.say("first run done", delay_seconds=1.0), Reply.say("second"))

    async def work(runtime: Runtime) -> list[Any]:
        panel = await runtime.panel("cron")
        values = {"name": "brief", "schedule": "every 1d", "prompt": "Brief me"}
        checked = await panel.act("check", values)
        assert checked.view is not None  # explained first
        await panel.act("create", values)
        job_id = JobStore(str(home)).find("brief")["id"]
        started = await panel.act("run", {"job": job_id})
        assert "started" in started.message
        runs = RunLog.open(home)
        try:
            await asyncio.to_thread(runs.request, job_id)  # another process asks meanwhile
            deadline = asyncio.get_running_loop().time() + 60
            while asyncio.get_running_loop().time() < deadline:
                done = await asyncio.to_thread(runs.of_job, job_id)
                if len(done) == 2 and all(run.ended for run in done):
                    break
                await asyncio.sleep(0.2)
            for _ in range(50):  # the lock is let go once the runs are over
                if panel._runner is None:  # type: ignore[attr-defined]  # the page's runner
                    break
                await asyncio.sleep(0.1)
            return await asyncio.to_thread(runs.of_job, job_id)
        finally:
            runs.close()

    finished = run(home, work)
    assert [run_.status for run_ in finished] == ["completed", "completed"]
    scheduler_lock(str(home)).release()  # free: a gateway starting now could take it

"""The cronjob tool: the agent schedules on request, and a job made in a chat delivers there."""

from __future__ import annotations

from hermes_plugin_cron.jobs import JobStore
from hermes_plugin_cron.tool import cronjob, origin_of

from hermes_sdk.tooling import ToolContext


def context(home, source: str = "telegram", user_scope: str | None = "telegram:42") -> ToolContext:
    return ToolContext(
        session_id="s", home=str(home), cwd=str(home), source=source, user_scope=user_scope
    )


def test_a_job_made_in_a_chat_delivers_to_that_chat(tmp_path):
    said = cronjob("create", context(tmp_path), schedule="every 1d", prompt="Stretch", name="s")
    assert said.startswith("scheduled job 's'") and "delivered to origin" in said
    (job,) = JobStore(tmp_path).load()
    assert job["origin"] == {"platform": "telegram", "chat_id": "42"}


def test_a_shared_chat_is_its_own_origin_and_the_terminal_has_none(tmp_path):
    assert origin_of(context(tmp_path, user_scope="telegram:chat:-100123")) == {
        "platform": "telegram",
        "chat_id": "-100123",
    }
    assert origin_of(context(tmp_path, source="cli", user_scope=None)) is None


def test_list_pause_resume_remove_and_bad_requests(tmp_path):
    here = context(tmp_path)
    cronjob("create", here, schedule="0 8 * * *", prompt="Morning", name="morning")
    assert cronjob("list", here)[0]["name"] == "morning"
    assert cronjob("pause", here, job="morning") == "job 'morning' paused"
    assert cronjob("resume", here, job="morning") == "job 'morning' resumed"
    assert cronjob("remove", here, job="morning") == "removed job 'morning'"
    assert cronjob("list", here) == "no scheduled jobs"
    assert cronjob("create", here, schedule="sometime", prompt="x").startswith("error: ")
    assert cronjob("pause", here, job="nobody").startswith("error: no job 'nobody'")
    assert cronjob("explode", here).startswith("error: unknown action")

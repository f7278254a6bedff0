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


def test_delivering_to_a_chat_that_is_neither_this_one_nor_a_home_chat_asks_first(tmp_path):
    """Issue 62: a job created from any turn delivered to any chat id, unasked, again and
    again. This chat and the home chats are free; anything else is the user's to allow."""
    asked: list[str] = []

    def answering(answer: str | None) -> ToolContext:
        def ask(question: str, choices) -> str | None:
            asked.append(question)
            return answer

        return ToolContext(
            session_id="s",
            home=str(tmp_path),
            cwd=str(tmp_path),
            source="telegram",
            user_scope="telegram:42",
            ask=ask,
            config={"cron": {"home_chats": {"slack": "C1"}}},
        )

    free = answering(None)
    for deliver in ("origin", "local", "telegram:42", "slack", "slack:C1", "origin,slack:C1"):
        said = cronjob("create", free, schedule="every 1d", prompt=deliver, deliver=deliver)
        assert said.startswith("scheduled job"), (deliver, said)
    assert asked == []
    for answer in (None, "deny"):
        said = cronjob(
            "create", answering(answer), schedule="every 1m", prompt="y", deliver="telegram:666"
        )
        assert said.startswith("error: delivering to telegram:666 needs the user's approval")
    assert len(asked) == 2 and "telegram:666" in asked[0]
    said = cronjob(
        "create", answering("allow"), schedule="every 1d", prompt="z", deliver="telegram:666"
    )
    assert said.startswith("scheduled job")
    assert len(JobStore(tmp_path).load()) == 7

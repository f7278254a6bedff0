"""The learning loop end to end, through ``hermes chat -q`` and the scripted model: a turn of
six tool calls, the background review that saves a skill, and a new session whose prompt
lists the skill and whose model loads it."""

from __future__ import annotations

import json

import pytest

from hermes_testkit import Reply

SKILL = """---
name: tidy-downloads
description: Sort a downloads folder into subfolders by file type and report what moved.
---
# Tidy a downloads folder

1. List the files: `ls -1 DOWNLOADS`.
2. Make one folder per kind (documents, images, archives) and move each file there.
3. Report what moved where.
"""


@pytest.fixture
def configured(hermes, openai_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.agents/skills of the machine
    hermes.config(f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n")
    return hermes


def system_prompt(request) -> str:
    return str(request.json["messages"][0]["content"])


def tool_results(request) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == "tool"]


def six_tool_calls() -> list[Reply]:
    steps = [("todo", {"todos": [{"content": "sort files", "status": "in_progress"}]})]
    steps += [("terminal", {"command": f"echo step {n}"}) for n in range(1, 5)]
    steps += [("todo", {"todos": [{"content": "sort files", "status": "completed"}]})]
    return [Reply.tool_call(name, arguments) for name, arguments in steps]


def test_a_long_turn_is_reviewed_into_a_skill_the_next_session_uses(configured, openai_server):
    openai_server.queue(
        *six_tool_calls(),
        Reply.say("Sorted 4 files."),
        # the background review, after the reply was printed:
        Reply.tool_call(
            "skill_manage", {"action": "create", "name": "tidy-downloads", "content": SKILL}
        ),
        Reply.say("created skill tidy-downloads"),
    )
    first = configured("chat", "-q", "tidy my downloads folder")
    assert first.code == 0 and "Sorted 4 files." in first.out
    assert "echo step 3" in first.err  # the turn's tools are shown as they run ...
    assert "skill_manage" not in first.err + first.out  # ... the review's are not
    requests = openai_server.requests
    assert len(requests) == 9
    review = requests[7]
    assert "Background review" in system_prompt(review)
    tools = {tool["function"]["name"] for tool in review.json["tools"]}
    assert "skill_manage" in tools and "memory" in tools
    assert "terminal" not in tools and "write_file" not in tools  # it learns; it never acts
    transcript = review.json["messages"][1]["content"]
    assert "took 6 tool calls" in transcript and "echo step 3" in transcript
    assert tool_results(requests[8])[0].startswith("create tidy-downloads: write SKILL.md")
    saved = configured.home / "skills" / "tidy-downloads" / "SKILL.md"
    assert saved.read_text() == SKILL

    openai_server.queue(
        Reply.tool_call("skill_view", {"name": "tidy-downloads"}),
        Reply.say("Following the tidy-downloads skill."),
    )
    second = configured("chat", "-q", "my downloads are a mess again")
    assert second.code == 0
    first_call = openai_server.requests[9]
    assert "- tidy-downloads: Sort a downloads folder" in system_prompt(first_call)
    (loaded,) = tool_results(openai_server.requests[10])
    assert "Make one folder per kind" in loaded


def test_a_short_turn_is_not_reviewed(configured, openai_server):
    openai_server.queue(Reply.tool_call("terminal", {"command": "echo hi"}), Reply.say("hi"))
    assert configured("chat", "-q", "say hi").code == 0
    assert len(openai_server.requests) == 2


def test_a_correction_is_reviewed_and_a_failing_review_never_fails_the_chat(
    configured, openai_server
):
    openai_server.queue(Reply.say("Done, in metric."), Reply.error(500), Reply.error(500))
    configured.config(
        configured.home.joinpath("config.yaml").read_text() + "agent:\n  retries: 1\n"
    )
    result = configured("chat", "-q", "no, I said imperial units")
    assert result.code == 0 and "Done, in metric." in result.out
    assert "Background review" in system_prompt(openai_server.requests[1])
    assert "the user corrected the agent" in json.dumps(openai_server.requests[1].json)


def test_reviews_can_be_turned_off(configured, openai_server):
    configured.config(
        configured.home.joinpath("config.yaml").read_text() + "learning:\n  review: false\n"
    )
    openai_server.queue(*six_tool_calls(), Reply.say("Sorted."))
    assert configured("chat", "-q", "tidy").code == 0
    assert len(openai_server.requests) == 7


def test_every_nth_user_turn_a_memory_check_runs_out_of_band(configured, openai_server):
    configured.config(
        configured.home.joinpath("config.yaml").read_text() + "learning:\n  nudge_every_turns: 2\n"
    )
    openai_server.queue(Reply.say("Noted."))
    assert configured("chat", "-q", "I edit code in vim").code == 0
    assert len(openai_server.requests) == 1  # the first turn: no check yet
    openai_server.queue(
        Reply.say("Tabs it is."),
        Reply.tool_call(
            "memory", {"action": "add", "target": "user", "content": "Edits in vim, with tabs."}
        ),
        Reply.say("saved the editor preference"),
    )
    assert configured("chat", "-c", "-q", "and I indent with tabs").code == 0
    check = openai_server.requests[2]
    assert "# Memory check" in system_prompt(check)
    assert {tool["function"]["name"] for tool in check.json["tools"]} == {
        "memory",
        "session_search",
    }
    shown = check.json["messages"][1]["content"]
    assert "I edit code in vim" in shown and "Tabs it is." in shown
    user_md = configured.home / "memories" / "USER.md"
    assert user_md.read_text() == "Edits in vim, with tabs.\n"
    sessions = configured("sessions", "list").out
    assert "review" in sessions


def test_a_tool_that_failed_then_worked_is_reviewed(configured, openai_server, tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    openai_server.queue(
        Reply.tool_call("read_file", {"path": "note.txt"}),
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Reply.say("It says hello."),
        Reply.say("NOTHING"),
    )
    assert configured("chat", "-q", "what is in my notes?").code == 0
    review = openai_server.requests[3].json
    assert "a tool failed and then worked (1x)" in review["messages"][1]["content"]


def test_a_refusal_alone_is_not_a_recovery(configured, openai_server):
    openai_server.queue(
        Reply.tool_call("read_file", {"path": "missing.txt"}), Reply.say("There is no such file.")
    )
    assert configured("chat", "-q", "read missing.txt").code == 0
    assert len(openai_server.requests) == 2

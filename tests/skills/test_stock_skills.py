"""The stock skills: about thirty, each passing the linter, each loaded by the scripted
agent and its instructions reaching the model; the ones with scripts run them; and the
index of everything installed stays within ``skills.index_chars``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hermes_plugin_skills.seed import BUNDLED

from hermes_testkit import Reply

STOCK = sorted(path.parent.name for path in BUNDLED.glob("*/SKILL.md"))
SCRIPTED = {
    "scheduling-across-time-zones": (
        "python3 {folder}/scripts/tz_table.py 2026-03-30T15:00 Europe/Berlin America/New_York",
        "America/New_York         Mon 2026-03-30 09:00 (UTC-0400)",
    ),
    "regex-crafting": (
        "python3 {folder}/scripts/try_regex.py '[0-9]{{4}}-[0-9]{{2}}' 2026-10 --not 26-10",
        "ok  no match '26-10'",
    ),
    "log-analysis": (
        "printf 'E1 ERROR db timeout id=0x1f\\nE2 ERROR db timeout id=0x2e\\n' > app.log && "
        "sh {folder}/scripts/top_errors.sh app.log",
        "2 EN ERROR db timeout id=HEX",
    ),
}


def test_there_are_thirty_and_each_passes_the_linter(chat):
    assert len(STOCK) >= 30
    checked = chat("skills", "check")
    assert checked.code == 0, checked.out
    assert f"{len(STOCK)} skills, 0 unusable, 0 warnings" in checked.out


def system_prompt(request) -> str:
    return str(request.json["messages"][0]["content"])


def tool_results(request) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("name", STOCK)
def test_the_agent_loads_and_follows_each(chat, openai_server, name):
    folder = chat.home / "skills" / name
    steps = [Reply.tool_call("skill_view", {"name": name})]
    script = SCRIPTED.get(name)
    if script is not None:
        steps.append(Reply.tool_call("terminal", {"command": script[0].format(folder=folder)}))
    openai_server.queue(*steps, Reply.say(f"Done with {name}."))
    result = chat("chat", "-q", f"a task for {name}")
    assert result.code == 0, result.err
    first, loaded = openai_server.requests[0], openai_server.requests[1]
    assert f"- {name}:" in system_prompt(first)  # the index offers it
    body = (BUNDLED / name / "SKILL.md").read_text().split("---", 2)[2].strip()
    assert body.splitlines()[0] in tool_results(loaded)[0]  # its instructions reached the model
    assert body.splitlines()[-1] in tool_results(loaded)[0]
    if script is not None:
        assert script[1] in tool_results(openai_server.requests[2])[1]
    assert f"Done with {name}." in result.out


def test_the_scripts_fail_in_one_line_on_bad_input():
    tz = BUNDLED / "scheduling-across-time-zones/scripts/tz_table.py"
    run = subprocess.run(
        [sys.executable, str(tz), "2026-01-01T10:00", "Mars/Base"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        run.returncode == 2
        and run.stderr.strip()
        == "unknown time zone 'Mars/Base': use an IANA name such as Europe/Paris"
    )
    regex = BUNDLED / "regex-crafting/scripts/try_regex.py"
    bad = subprocess.run(
        [sys.executable, str(regex), "([a-z"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and bad.stderr.startswith("the pattern does not compile")


def test_the_index_with_everything_installed_stays_within_its_budget(chat, openai_server):
    for optional in (
        "kubernetes-debugging",
        "terraform-review",
        "jupyter-notebooks",
        "ffmpeg-media",
        "latex-documents",
    ):
        assert chat("skills", "install", optional, "--yes").code == 0
    for number in range(120):  # a long-lived home: many skills of the agent's own
        folder = chat.home / "skills" / f"own-skill-{number}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: own-skill-{number}\ndescription: Something the agent learned, number {number}, "
            "with a long description that goes on and on to use up the index.\n---\nSteps.\n"
        )
    openai_server.queue(Reply.say("ok"))
    assert chat("chat", "-q", "hi").code == 0
    prompt = system_prompt(openai_server.requests[0])
    start = prompt.index("Skills are saved methods")
    index = prompt[start:].split("\n\n#", 1)[0]
    assert len(index) <= 6000
    assert "... and" in index and "more: skills_list(query=...) finds them." in index
    chat.config((chat.home / "config.yaml").read_text() + "skills:\n  index_chars: 20000\n")
    openai_server.queue(Reply.say("ok"))
    assert chat("chat", "-q", "hi").code == 0
    roomy = system_prompt(openai_server.requests[1])
    for name in [*STOCK, "kubernetes-debugging"]:
        assert f"- {name}:" in roomy  # with room, each with its description


def test_an_existing_home_gets_the_new_stock_skills_and_keeps_its_edits(chat, openai_server):
    openai_server.queue(Reply.say("ok"), Reply.say("ok"))
    assert chat("chat", "-q", "hi").code == 0
    edited = chat.home / "skills/code-review/SKILL.md"
    edited.write_text(edited.read_text() + "\nAlways check the changelog too.\n")
    (chat.home / "skills/sql-queries/SKILL.md").unlink()
    (chat.home / "skills/.bundled.json").write_text('{"bundle": "older", "files": {}}')
    assert chat("chat", "-q", "hi").code == 0
    assert "Always check the changelog too." in edited.read_text()
    assert Path(
        chat.home / "skills/sql-queries/SKILL.md"
    ).is_file()  # an unrecorded file comes back

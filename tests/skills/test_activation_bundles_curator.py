"""Skills that apply only somewhere (front-ends, operating systems, toolsets), bundles and
``--skills`` preloads, and the curator (archive stale agent-written skills, keep pinned and
hand-written ones, restore byte for byte), through ``hermes`` and the scripted model."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

from hermes_testkit import Reply

DAY = 86_400


def write_skill(home, name: str, extra: str = "", body: str = "Steps.") -> None:
    folder = home / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n{body}\n"
    )


def agent_writes(chat, openai_server, *contents: str) -> None:
    """A turn in which the agent creates a skill of each SKILL.md text."""
    names = [text.split("name: ", 1)[1].split("\n", 1)[0] for text in contents]
    openai_server.queue(
        *(
            Reply.tool_call("skill_manage", {"action": "create", "name": name, "content": text})
            for name, text in zip(names, contents, strict=True)
        ),
        Reply.say("saved"),
    )
    assert chat("chat", "-q", "save these as skills").code == 0


def prompt_of(openai_server, index: int = -1) -> str:
    return str(openai_server.requests[index].json["messages"][0]["content"])


def test_platforms_and_toolsets_decide_what_the_index_lists(chat, openai_server):
    here = {"linux": "linux", "darwin": "macos"}.get(sys.platform, "windows")
    elsewhere = "windows" if here != "windows" else "linux"
    write_skill(chat.home, "telegram-only", "platforms: [telegram]\n")
    write_skill(chat.home, "cli-only", "platforms: [cli]\n")
    write_skill(chat.home, "this-os", f"platforms: [{here}]\n")
    write_skill(chat.home, "other-os", f"platforms: [{elsewhere}]\n")
    write_skill(chat.home, "needs-web", "metadata:\n  hermes:\n    requires_toolsets: [web]\n")
    write_skill(chat.home, "without-web", "fallback_for_toolsets: [web]\n")
    write_skill(chat.home, "needs-todo-tool", "requires_tools: [todo]\n")
    openai_server.queue(Reply.say("ok"), Reply.say("ok"))
    assert chat("chat", "-q", "hi").code == 0
    full = prompt_of(openai_server)
    assert "- cli-only:" in full and "- this-os:" in full
    assert "telegram-only" not in full and "other-os" not in full
    assert "- needs-web:" in full and "without-web" not in full  # the web tools are there
    assert "- needs-todo-tool:" in full
    assert chat("chat", "-q", "hi", "--toolsets", "terminal,skills").code == 0
    narrow = prompt_of(openai_server)
    assert "needs-web" not in narrow and "- without-web:" in narrow
    assert "needs-todo-tool" not in narrow
    listed = chat("skills", "list").out  # listing and loading by name are not limited
    assert "telegram-only" in listed and "other-os" in listed


def test_a_badly_written_activation_field_is_a_warning(chat):
    write_skill(chat.home, "odd", "platforms:\n  telegram: true\n")
    checked = chat("skills", "check")
    assert "warning: platforms should be a list of names, got {'telegram': True}" in checked.out


def test_skills_preloaded_from_the_command_line(chat, openai_server):
    openai_server.queue(Reply.say("ok"))
    result = chat(
        "chat",
        "-q",
        "review my change",
        "--skills",
        "code-review,no-such-skill",
        "-s",
        "git-workflow",
    )
    assert result.code == 0, result.err
    prompt = prompt_of(openai_server)
    assert 'started this session with the skill "code-review" loaded' in prompt
    assert "# Reviewing a change" in prompt and "# Git workflow" in prompt
    assert "Skills asked for but not installed: no-such-skill" in prompt


def test_bundles_are_created_listed_shown_and_deleted(chat):
    made = chat(
        "skills",
        "bundle",
        "create",
        "Release Day",
        "-s",
        "release-notes,git-workflow",
        "-s",
        "writing-tests",
        "-d",
        "Cut a release",
        "-i",
        "Go in order.",
    )
    assert made.code == 0, made.err
    assert "saved bundle release-day (3 skills)" in made.out
    assert (
        "release-day              release-notes, git-workflow, writing-tests"
        in chat("skills", "bundle", "list").out
    )
    shown = chat("skills", "bundle", "show", "release-day").out
    assert "instruction: Go in order." in shown
    refused = chat("skills", "bundle", "create", "release-day", "-s", "code-review")
    assert refused.code == 1 and "--force replaces it" in refused.err
    unknown = chat("skills", "bundle", "create", "x", "-s", "nope")
    assert unknown.code == 1 and "no skill named nope" in unknown.err
    (chat.home / "skill-bundles/broken.yaml").write_text("skills: {not: a list}\n")
    assert "left out: " in chat("skills", "bundle", "list").err
    assert chat("skills", "bundle", "delete", "release-day").code == 0
    assert not (chat.home / "skill-bundles/release-day.yaml").exists()


def digest(folder) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def age(chat, name: str, days: int) -> None:
    """Make ``name`` look untouched for ``days``: its record and its file's time."""
    path = chat.home / "skills/.curator/usage.json"
    records = json.loads(path.read_text())
    old = time.time() - days * DAY
    for key in ("created_at", "first_seen_at", "last_viewed_at", "last_used_at", "patched_at"):
        if key in records.get(name, {}):
            records[name][key] = old
    path.write_text(json.dumps(records))
    skill_md = chat.home / "skills" / name / "SKILL.md"
    os.utime(skill_md, (old, old))


def test_the_curator_archives_stale_agent_skills_keeps_pinned_and_restores(chat, openai_server):
    content = "---\nname: {n}\ndescription: Tidy the {n} folder by type.\n---\n1. ls\n2. move\n"
    openai_server.queue(
        Reply.tool_call(
            "skill_manage",
            {"action": "create", "name": "stale-one", "content": content.format(n="stale-one")},
        ),
        Reply.tool_call(
            "skill_manage",
            {"action": "create", "name": "pinned-one", "content": content.format(n="pinned-one")},
        ),
        Reply.tool_call(
            "skill_manage",
            {
                "action": "write_file",
                "name": "stale-one",
                "file_path": "scripts/run.sh",
                "file_content": "echo hi\n",
            },
        ),
        Reply.tool_call("skill_view", {"name": "pinned-one"}),
        Reply.say("saved both"),
    )
    assert chat("chat", "-q", "save these as skills").code == 0
    records = json.loads((chat.home / "skills/.curator/usage.json").read_text())
    assert records["stale-one"]["created_by"] == "agent"
    assert (
        records["pinned-one"]["views"] == 1 and records["pinned-one"]["uses"] == 1
    )  # a turn that ended well
    write_skill(chat.home, "hand-written")  # the user's own: never the curator's
    before = digest(chat.home / "skills/stale-one")
    assert chat("skills", "curator", "pin", "pinned-one").code == 0
    for name in ("stale-one", "pinned-one", "hand-written"):
        age(chat, name, 200) if name != "hand-written" else os.utime(
            chat.home / "skills/hand-written/SKILL.md", (0, 0)
        )
    dry = chat("skills", "curator", "run", "--dry-run")
    assert "(dry run) archived stale-one" in dry.out and (chat.home / "skills/stale-one").exists()
    ran = chat("skills", "curator", "run")
    assert "archived stale-one" in ran.out and "kept pinned-one: pinned" in ran.out
    assert not (chat.home / "skills/stale-one").exists()
    assert (chat.home / "skills/pinned-one").exists() and (
        chat.home / "skills/hand-written"
    ).exists()
    assert "stale-one" not in chat("skills", "list").out
    status = chat("skills", "curator", "status").out
    rows = {line.split()[0]: line for line in status.splitlines()[2:]}
    assert rows["pinned-one"].endswith("pinned") and " 1 " in rows["pinned-one"]
    assert "archived" in rows["stale-one"]
    restored = chat("skills", "curator", "restore", "stale-one")
    assert restored.code == 0, restored.err
    assert digest(chat.home / "skills/stale-one") == before  # byte for byte, scripts too
    again = chat("skills", "curator", "restore", "stale-one")
    assert again.code == 1 and "is not archived" in again.err
    assert "archived stale-one" not in chat("skills", "curator", "run").out  # restored: fresh
    assert (chat.home / "skills/stale-one").exists()


def test_the_automatic_run_happens_at_a_session_start_when_due(chat, openai_server):
    content = "---\nname: forgotten\ndescription: Something done once.\n---\nSteps.\n"
    agent_writes(chat, openai_server, content)
    openai_server.queue(Reply.say("hello again"))
    age(chat, "forgotten", 100)
    (chat.home / "skills/.curator/state.json").write_text(
        json.dumps({"last_run_at": time.time() - 2 * DAY})
    )
    assert chat("chat", "-q", "hi").code == 0
    assert not (chat.home / "skills/forgotten").exists()
    assert (chat.home / "skills/.archive/forgotten/SKILL.md").read_text() == content
    assert "forgotten" not in prompt_of(openai_server)


TIDY = "---\nname: tidy-downloads\ndescription: Sort the downloads folder into subfolders by file type.\n---\nUse ls.\n"
SORT = "---\nname: sort-downloads\ndescription: Sort the downloads folder into subfolders by type of file.\n---\nUse find.\n"
CLEAN = "---\nname: clean-downloads\ndescription: Sort the downloads folder into subfolders by the file type.\n---\nUse fd.\n"


def test_near_duplicates_are_proposed_as_a_merge_and_approving_archives_one(chat, openai_server):
    agent_writes(chat, openai_server, TIDY, SORT)
    ran = chat("skills", "curator", "run")
    assert "proposed merging" in ran.out
    proposal = ran.out.split(" as ", 1)[1].split(":", 1)[0]
    diff = chat("skills", "diff", proposal).out
    assert "## Also:" in diff
    assert chat("skills", "approve", proposal).code == 0
    names = {"tidy-downloads", "sort-downloads"}
    kept = {n for n in names if (chat.home / "skills" / n).exists()}
    assert len(kept) == 1
    (merged,) = names - kept
    assert (chat.home / "skills/.archive" / merged / "SKILL.md").is_file()
    (survivor,) = kept
    assert "## Also:" in (chat.home / "skills" / survivor / "SKILL.md").read_text()
    restored = chat("skills", "curator", "restore", merged)
    assert restored.code == 0 and "as it was before the merge" in restored.out
    assert (chat.home / "skills" / survivor / "SKILL.md").read_text() in (TIDY, SORT)  # undone
    assert "proposed merging" not in chat("skills", "curator", "run").out  # you said no


def test_a_merge_of_a_skill_in_a_category_applies_and_a_rejected_one_is_not_proposed_again(
    chat, openai_server
):
    agent_writes(chat, openai_server, TIDY, SORT)
    category = chat.home / "skills" / "files"
    category.mkdir()
    for name in ("tidy-downloads", "sort-downloads"):
        (chat.home / "skills" / name).rename(category / name)
    ran = chat("skills", "curator", "run")
    proposal = ran.out.split(" as ", 1)[1].split(":", 1)[0]
    approved = chat("skills", "approve", proposal)
    assert approved.code == 0, approved.err
    kept = [n for n in ("tidy-downloads", "sort-downloads") if (category / n).exists()]
    assert len(kept) == 1 and "## Also:" in (category / kept[0] / "SKILL.md").read_text()
    agent_writes(chat, openai_server, CLEAN)
    again = chat("skills", "curator", "run")
    assert "proposed merging" in again.out
    second_id = again.out.split(" as ", 1)[1].split(":", 1)[0]
    assert chat("skills", "reject", second_id).code == 0
    assert "proposed merging" not in chat("skills", "curator", "run").out


def test_a_damaged_record_never_lets_the_curator_touch_anything_else(chat):
    victim = chat.home / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    usage = chat.home / "skills/.curator/usage.json"
    usage.parent.mkdir(parents=True)
    usage.write_text(
        json.dumps(
            {
                "ghost": {
                    "state": "archived",
                    "archived_path": "../../victim",
                    "archived_at": 0,
                    "original_path": "../../elsewhere",
                },
            }
        )
    )
    pruned = chat("skills", "curator", "prune", "--days", "1", "--yes")
    assert pruned.code == 0 and (victim / "keep.txt").read_text() == "mine"
    restored = chat("skills", "curator", "restore", "ghost")
    assert restored.code == 1 and "points outside" in restored.err
    assert (victim / "keep.txt").is_file() and not (chat.home.parent / "elsewhere").exists()


def test_tool_names_keep_their_case(chat):
    from hermes_plugin_skills.activation import applies

    from hermes_commons.skill_md import parse_skill_text

    text = "---\nname: mcp-files\ndescription: Uses an MCP tool.\nrequires_tools: [mcp_gh_getFile]\n---\nx\n"
    skill = parse_skill_text(text, chat.home / "mcp-files")
    assert applies(skill, "cli", None, frozenset({"mcp_gh_getFile"}))
    assert not applies(skill, "cli", None, frozenset({"terminal"}))

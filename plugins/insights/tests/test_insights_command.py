"""``hermes insights`` as a user runs it: on a home imported from the real hermes-agent, on
a home whose sessions the real runtime stored (with tool calls, a priced and an unpriced
model), on an empty home, and with a bad ``--days``."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import hermes_plugin_insights
import pytest

from hermes_sdk.runtime import SessionOptions, SessionSummary, open_runtime
from hermes_testkit import PluginTests, Reply, ScriptedOpenAIServer

HERMES = str(Path(sys.executable).parent / "hermes")
FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "hermes_agent" / "home"
BLOCKS = "█▉▊▋▌▍▎▏"


class TestPlugin(PluginTests):
    plugin = hermes_plugin_insights
    pyproject = Path(__file__).parents[1] / "pyproject.toml"


def hermes(
    home: Path, *args: str, columns: int = 80, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ.update({"HERMES_HOME": str(home), "COLUMNS": str(columns)})
    return subprocess.run(
        [*python, HERMES, *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def chart(out: str, title: str) -> list[str]:
    """The lines of one chart: its heading line to the blank line after it."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def row(lines: list[str], label: str) -> list[str]:
    """A chart line's words, bar included, found by its label."""
    (found,) = [line.split() for line in lines if line.split()[0] == label]
    return found


def is_bar(text: str) -> bool:
    return bool(text) and set(text) <= set(BLOCKS)


# --- a home hermes-agent wrote, imported -----------------------------------------------------


def fixture_sessions() -> list[dict[str, Any]]:
    """The fixture's sessions as hermes-agent stored them."""
    with sqlite3.connect(f"file:{FIXTURE / 'state.db'}?mode=ro&immutable=1", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM sessions")]


def test_a_home_imported_from_hermes_agent(tmp_path: Path) -> None:
    source = tmp_path / "hermes-agent-home"
    shutil.copytree(FIXTURE, source, symlinks=True)
    home = tmp_path / "home"
    home.mkdir()
    imported = hermes(home, "import", "hermes-agent", str(source), "--yes")
    assert imported.returncode == 0, imported.stderr
    theirs = fixture_sessions()
    tokens_in = sum(s["input_tokens"] for s in theirs)
    tokens_out = sum(s["output_tokens"] for s in theirs)
    # Counted on the day each started (a local day), not on the day they were imported.
    days = {time.strftime("%Y-%m-%d", time.localtime(s["started_at"])) for s in theirs}
    (model,) = {s["model"] for s in theirs}

    shown = hermes(home, "insights", "--days", "100000", columns=100)

    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert all(len(line) <= 100 for line in out.splitlines())
    assert "\x1b" not in out  # not a terminal: no colours
    assert out.startswith("Usage over the last 100,000 days (")
    assert f"  tokens: {tokens_in + tokens_out:,} ({tokens_in:,} in, {tokens_out:,} out" in out
    # No price is known for the fixture's model: "unknown", never $0.
    assert f"  cost: unknown; no price is known for {model}\n" in out
    assert f"({len(theirs)} of them imported with totals only, not call by call)" in out
    by_day = chart(out, "By day")
    for day in days:
        _, drawn, _, cost = row(by_day, day)
        assert is_bar(drawn) and cost == "unknown"
    assert sum(int(row(by_day, day)[2].replace(",", "")) for day in days) == tokens_in + tokens_out
    _, provider, drawn, figure, cost = row(chart(out, "By model"), model)
    assert provider == "(custom)" and is_bar(drawn) and figure == f"{tokens_in + tokens_out:,}"
    platforms = chart(out, "By platform")
    cli = [s for s in theirs if s["source"] == "cli"]
    _, drawn, sessions, figure, cost = row(platforms, "cli")
    assert is_bar(drawn) and int(sessions) == len(cli)
    assert figure == f"{sum(s['input_tokens'] + s['output_tokens'] for s in cli):,}"
    assert row(platforms, "delegate")[2:4] == ["1", "8,608"]  # the subagent's session
    tools = chart(out, "By tool")
    assert row(tools, "memory")[2:] == ["2", "0"]  # imported results are not failures
    assert is_bar(row(tools, "memory")[1]) and row(tools, "terminal")[2:] == ["1", "0"]

    as_json = hermes(home, "insights", "--days", "100000", "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["days"] == 100000
    assert report["totals"] == {
        "sessions": len(theirs),
        "sessions_with_totals_only": len(theirs),
        "model_calls": 0,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cache_read_tokens": 0,
        "tokens": tokens_in + tokens_out,
        "cost_usd": None,
        "unpriced_calls": len(theirs),
        "tool_calls": 5,
        "failed_tool_calls": 0,
    }
    assert {entry["day"] for entry in report["by_day"]} == days
    assert [(m["provider"], m["model"]) for m in report["by_model"]] == [("custom", model)]
    assert {p["source"]: p["sessions"] for p in report["by_platform"]} == {
        "cli": len(cli),
        "delegate": 1,
    }
    assert {t["tool"]: t["calls"] for t in report["by_tool"]} == {
        "memory": 2,
        "terminal": 1,
        "skill_manage": 1,
        "delegate_task": 1,
    }
    assert report["unpriced_models"] == [model]

    recent = hermes(home, "insights", "--days", "1", "--json")
    if days != {time.strftime("%Y-%m-%d")}:  # the fixture's day is not today
        assert json.loads(recent.stdout)["totals"]["tokens"] == 0


# --- a home the runtime wrote ----------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n",
        encoding="utf-8",
    )
    return path


async def run_sessions(home: Path) -> list[SessionSummary]:
    """A Telegram chat on a priced model that calls a tool and one that does not exist, and
    a scheduled job on a model no price table knows."""
    async with open_runtime(home) as runtime:
        for source, model in (("telegram", "gpt-4o-mini"), ("cron", None)):
            options = SessionOptions(source=source, model=model, toolsets=("todo",))
            session = await runtime.open_session(options)
            ended = await runtime.start_turn(session.session_id, "plan my day").result()
            assert ended.ok, ended.error
        return await runtime.sessions(background=True)


def test_a_home_the_runtime_wrote(home: Path, openai_server: ScriptedOpenAIServer) -> None:
    todo = {"todos": [{"id": "1", "content": "tea", "status": "pending"}]}
    openai_server.queue(
        Reply.tool_call("todo", todo, usage={"prompt_tokens": 900, "cached_tokens": 400}),
        Reply.tool_call("no_such_tool", {}),
        Reply.say("Planned."),
        Reply.say("Nothing to do."),
    )
    stored = asyncio.run(run_sessions(home))
    spent_in = sum(s.input_tokens for s in stored)
    spent_out = sum(s.output_tokens for s in stored)
    (telegram,) = [s for s in stored if s.source == "telegram"]
    assert telegram.estimated_cost_usd > 0 and telegram.unpriced_calls == 0  # priced

    shown = hermes(home, "insights", columns=64)

    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert all(len(line) <= 64 for line in out.splitlines())
    assert out.startswith("Usage over the last 30 days (")
    assert "  2 sessions started, 4 model calls, 2 tool calls (1 failed)\n" in out
    cost = f"${telegram.estimated_cost_usd:.4f}"
    cost_line = f"cost: {cost} + unknown (1 call unpriced); no price is known for test-model"
    assert cost_line in " ".join(out.split())  # wrapped to fit 64 columns
    today = time.strftime("%Y-%m-%d")
    assert row(chart(out, "By day"), today)[3] == f"≥{cost}"  # a lower bound, marked
    assert "≥: some calls have no known price; the cost is at least this." in out
    models = chart(out, "By model")
    assert row(models, "gpt-4o-mini")[4] == cost
    assert row(models, "test-model")[4] == "unknown"
    platforms = chart(out, "By platform")
    assert row(platforms, "telegram")[2] == "1" and row(platforms, "telegram")[4] == cost
    assert row(platforms, "cron")[4] == "unknown"
    tools = chart(out, "By tool")
    assert tools[0].split() == ["By", "tool", "calls", "failed"]
    _, drawn, calls, failed = row(tools, "todo")
    assert is_bar(drawn) and (calls, failed) == ("1", "0")
    assert row(tools, "no_such_tool")[2:] == ["1", "1"]

    report = json.loads(hermes(home, "insights", "--json").stdout)
    totals = report["totals"]
    # The calls recorded one by one add up to the sessions' own totals.
    assert (totals["input_tokens"], totals["output_tokens"]) == (spent_in, spent_out)
    assert totals["cache_read_tokens"] == 400
    assert totals["cost_usd"] == pytest.approx(telegram.estimated_cost_usd)
    assert (totals["unpriced_calls"], totals["model_calls"]) == (1, 4)
    assert (totals["tool_calls"], totals["failed_tool_calls"]) == (2, 1)
    assert [entry["day"] for entry in report["by_day"]] == [today]
    by_model = {m["model"]: m for m in report["by_model"]}
    assert by_model["test-model"]["cost_usd"] is None  # unknown, not 0
    assert by_model["gpt-4o-mini"]["model_calls"] == 3
    assert {t["tool"]: (t["calls"], t["failed"]) for t in report["by_tool"]} == {
        "todo": (1, 0),
        "no_such_tool": (1, 1),
    }


# --- an empty home, and bad input --------------------------------------------------------------


def test_an_empty_home_says_so_and_loads_no_other_plugin(tmp_path: Path) -> None:
    done = hermes(tmp_path, "insights", python=(sys.executable, "-X", "importtime"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "No usage yet: this home has no sessions. Start one with: hermes chat\n"
    imported = {
        line.rpartition("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    plugins = {name.partition(".")[0] for name in imported if name.startswith("hermes_plugin_")}
    assert plugins == {"hermes_plugin_insights", "hermes_plugin_store_sqlite"}  # and the store

    report = json.loads(hermes(tmp_path, "insights", "--json", "--days", "7").stdout)
    assert report["days"] == 7 and report["totals"]["tokens"] == 0
    assert report["by_day"] == report["by_model"] == report["by_tool"] == []


@pytest.mark.parametrize("days", ["0", "-3", "soon"])
def test_a_bad_number_of_days_is_one_line(tmp_path: Path, days: str) -> None:
    done = hermes(tmp_path, "insights", "--days", days)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"Error: Invalid value for '--days': '{days}' is not a whole number of days, 1 or more.\n"
    )

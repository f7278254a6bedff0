"""Regenerate the hermes-agent homes the import tests read (tests/fixtures/hermes_agent/).

The homes are written by the real hermes-agent wheel, installed from PyPI into a throwaway
environment, talking to the SDK test kit's scripted model server on loopback. Each prompt
below makes the model call one of hermes-agent's own tools, so what lands in the home (its
state.db, memories/, skills/, cron/jobs.json, pairing/, profiles/) is what hermes-agent
itself writes, not our idea of it.

    python scripts/gen_hermes_agent_homes.py            # a fresh venv (a few minutes)
    python scripts/gen_hermes_agent_homes.py --venv V   # reuse a venv that has it
    python scripts/gen_hermes_agent_homes.py --version 0.13.0 --minimal

``--minimal`` writes only sessions (a memory write, a command, a delegated child): enough to
pin how an older release's state.db reads (0.13.0 writes schema 11, 0.19.0 schema 22). The
0.19.0 home goes to tests/fixtures/hermes_agent/home, others to home-VERSION.

Needs the registries (PyPI) unless --venv is given; takes about two minutes to run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hermes_testkit import Reply, ScriptedOpenAIServer

VERSION = "0.19.0"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "hermes_agent"

SKILL = """---
name: brew-green-tea
description: Brew a cup of green tea that is not bitter.
---
# Brew green tea

1. Heat the water to 80 °C, not boiling.
2. Steep 2 g of leaves for two minutes.
3. Pour it all out: leaves left in water turn it bitter.
"""

MARKER = "hermes-fixture-marker-7"
"""Printed by the terminal tool in one session: the tests search for it."""

DROPPED = ("logs", "cache", "audio_cache", "image_cache", "sandboxes")
"""Folders of caches and logs that hermes-agent makes on every run; nothing to import."""


def respond(body: dict[str, Any]) -> Reply:
    """The scripted model: a tool call for each fixture prompt, then a reply to its result."""
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        said = {
            "memory": "Noted: you prefer tea, and this project uses uv.",
            "terminal": f"The command printed {MARKER}.",
            "skill_manage": "I saved the skill brew-green-tea.",
            "delegate_task": "The subagent found that Paris is the capital of France.",
        }
        return Reply.say(said.get(str(last.get("name")), "Done."))
    text = str(last.get("content") or "")
    if "prefer tea" in text:
        return Reply.calls(
            [
                ("memory", {"action": "add", "target": "user", "content": "Prefers tea."}),
                (
                    "memory",
                    {
                        "target": "memory",
                        "operations": [
                            {"action": "add", "content": "The project uses uv."},
                            {"action": "add", "content": "Tests run with pytest -n 2."},
                        ],
                    },
                ),
            ]
        )
    if "fixture marker" in text:
        return Reply.tool_call("terminal", {"command": f"echo {MARKER}"})
    if "skill for brewing" in text:
        return Reply.tool_call(
            "skill_manage",
            {"action": "create", "name": "brew-green-tea", "content": SKILL, "category": "home"},
        )
    if text.startswith("Delegate:"):
        return Reply.tool_call(
            "delegate_task", {"goal": "Find the capital of France", "context": "one word"}
        )
    if "東京" in text:
        return Reply.say("東京は今日は晴れです。")
    if "capital of France" in text:
        return Reply.say("Paris is the capital of France.")
    return Reply.say("Hello from the fixture model.")


def config_yaml(base_url: str, model: str) -> str:
    """A custom endpoint, as hermes-agent's docs configure one, and a few settings of ours
    to map (approvals, memory limits, a terminal backend, an MCP server)."""
    return f"""model:
  provider: custom
  base_url: {base_url}
  default: {model}
fallback_providers: []
terminal:
  backend: local
  timeout: 120
approvals:
  mode: manual
command_allowlist:
  - git status
memory:
  memory_enabled: true
  user_profile_enabled: true
  memory_char_limit: 2200
  user_char_limit: 1375
compression:
  enabled: true
  threshold: 0.5
mcp_servers:
  time:
    command: uvx
    args: [mcp-server-time]
display:
  skin: default
"""


class Agent:
    """The hermes command of the throwaway install, run against one home."""

    def __init__(self, venv: Path, home: Path, user_home: Path) -> None:
        self.venv = venv
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("HERMES_", "OPENAI_", "ANTHROPIC_", "VIRTUAL_ENV"))
        }
        self.env.update({"HERMES_HOME": str(home), "HOME": str(user_home), "NO_COLOR": "1"})
        self.cwd = user_home

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.venv / "bin" / "hermes"), *args],
            check=False,
            env=self.env,
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            sys.exit(f"hermes {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done.stdout

    def python(self, code: str) -> str:
        done = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c", code],
            env=self.env,
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()


def install(where: Path, version: str) -> Path:
    venv = where / "venv"
    uv = shutil.which("uv")
    if uv:
        subprocess.run([uv, "venv", "-q", "-p", "3.11", str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
             f"hermes-agent=={version}"],
            check=True,
        )  # fmt: skip
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"hermes-agent=={version}"], check=True
        )
    return venv


def write_sessions(agent: Agent) -> None:
    agent.run("-z", "Remember that I prefer tea, and that this project uses uv.")
    agent.run("-z", "Run a command that prints the fixture marker.")
    agent.run("-z", "Delegate: find the capital of France.")


def write_home(agent: Agent, home: Path, base_url: str, minimal: bool) -> None:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(config_yaml(base_url, "fixture-model"), encoding="utf-8")
    (home / ".env").write_text(
        "OPENAI_API_KEY=sk-fixture-not-a-real-key\nTELEGRAM_BOT_TOKEN=123:fixture\n",
        encoding="utf-8",
    )
    (home / ".env").chmod(0o600)
    if minimal:
        write_sessions(agent)
        return
    agent.run("-z", "Remember that I prefer tea, and that this project uses uv.")
    agent.run("-z", "Run a command that prints the fixture marker.")
    agent.run("-z", "Save a skill for brewing green tea.")
    agent.run("-z", "Delegate: find the capital of France.")
    agent.run("-z", "東京の天気を教えてください。")
    first = agent.run("sessions", "list").split()
    renamed = next(word for word in first if word.startswith("20") and "_" in word)
    agent.run("sessions", "rename", renamed, "Tokyo weather")
    agent.run("cron", "create", "every 2h", "Summarise the news for me", "--name", "news")
    agent.run("cron", "create", "0 9 * * 1", "Plan the week", "--name", "weekly plan")
    code = agent.python(
        "from gateway.pairing import PairingStore\n"
        "print(PairingStore().generate_code('telegram', '4242', 'ada'))"
    )
    agent.run("pairing", "approve", "telegram", code)
    agent.run("profile", "create", "work", "--no-alias", "--no-skills")
    work = home / "profiles" / "work"
    (work / "config.yaml").write_text(config_yaml(base_url, "work-model"), encoding="utf-8")
    agent.run("-p", "work", "-z", "Hello from the work profile.")


def prune(home: Path) -> None:
    for folder in [home, *sorted((home / "profiles").glob("*"))]:
        for name in DROPPED:
            shutil.rmtree(folder / name, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, help="a venv that has that version installed")
    parser.add_argument("--version", default=VERSION, help=f"of hermes-agent (default {VERSION})")
    parser.add_argument("--minimal", action="store_true", help="sessions only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-agent-fixture-") as scratch:
        where = Path(scratch)
        venv = args.venv or install(where, args.version)
        (where / "user").mkdir()
        home = where / "home"
        server = ScriptedOpenAIServer(0, default=Reply.say("Hello from the fixture model."))
        server.respond = respond
        with server:
            write_home(Agent(venv, home, where / "user"), home, server.base_url, args.minimal)
        prune(home)
        target = OUT / ("home" if args.version == VERSION else f"home-{args.version}")
        shutil.rmtree(target, ignore_errors=True)
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copytree(home, target, symlinks=True)
        stamp = OUT / f"{target.name}.version"  # beside the home: nothing in it is ours
        stamp.write_text(f"written by hermes-agent {args.version}\n", encoding="utf-8")
    files = sorted(p for p in target.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    print(json.dumps({"home": str(target), "files": len(files), "bytes": size}))


if __name__ == "__main__":
    main()

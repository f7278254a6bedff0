"""The same ten-step task done two ways, side by side: through model tool rounds (one
`terminal` to list ten notes, then one `read_file` per note, then the answer) and through
one `execute_code` call whose script makes the same eleven calls.

    uv run python tests/bench/execute_code.py [--notes 10] [--note-chars 1500]

Each way is a real `hermes chat -q` process against the scripted model server on loopback
(its usage counts about four characters of messages and tools a token, as real servers
roughly do). Prints, for each: model requests, prompt tokens summed over them, bytes sent,
and wall time; then the ratios. The saving grows with the notes' size and number, since
every tool round sends the whole conversation again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_testkit import Reply, ScriptedOpenAIServer
from hermes_testkit.openai_server import prompt_tokens

SCRIPT = """\
names = [line for line in terminal(command="ls -1 notes").splitlines()[1:] if line]
for name in names:
    text = read_file(path="notes/" + name)
    print(name, "mentions Berlin" if "Berlin" in text else "-")
"""
ANSWER = "Notes 3 and 7 mention Berlin."


def make_workspace(folder: Path, notes: int, chars: int) -> None:
    (folder / "notes").mkdir(parents=True)
    for number in range(1, notes + 1):
        city = "Berlin" if number in (3, 7) else "Lisbon"
        line = f"Note {number}: a trip to {city}, with plans and lists. "
        (folder / "notes" / f"note{number:02}.md").write_text(
            (line * (chars // len(line) + 1))[:chars]
        )


def run(home: Path, workspace: Path, replies: list[Reply]) -> dict[str, float]:
    with ScriptedOpenAIServer() as server:
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  default: test-model\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
        )
        server.queue(*replies)
        environment = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        environment.update(HERMES_HOME=str(home), OPENAI_API_KEY="sk-bench")
        started = time.perf_counter()
        done = subprocess.run(
            [str(Path(sys.executable).parent / "hermes"), "chat", "-q", "which notes?", "--json"],
            cwd=workspace,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0 or json.loads(done.stdout)["reply"] != ANSWER:
            raise SystemExit(f"the run failed: {done.stderr or done.stdout}")
        requests = [request.json for request in server.requests]
    return {
        "requests": len(requests),
        "prompt_tokens": sum(prompt_tokens(body) for body in requests),
        "bytes": sum(len(json.dumps(body).encode()) for body in requests),
        "seconds": seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10)
    parser.add_argument("--note-chars", type=int, default=1500)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="hermes-bench-code-"))
    workspace = base / "workspace"
    make_workspace(workspace, args.notes, args.note_chars)
    names = [f"note{number:02}.md" for number in range(1, args.notes + 1)]
    rounds = [
        Reply.tool_call("terminal", {"command": "ls -1 notes"}),
        *(Reply.tool_call("read_file", {"path": f"notes/{name}"}) for name in names),
        Reply.say(ANSWER),
    ]
    script = [Reply.tool_call("execute_code", {"code": SCRIPT}), Reply.say(ANSWER)]
    results = {}
    for way, replies in (("tool rounds", rounds), ("execute_code", script)):
        home = base / way.replace(" ", "-")
        home.mkdir()
        results[way] = run(home, workspace, replies)
    # The channel's own cost: one script of 100 calls against one of none, both one round.
    loop = "for _ in range(100):\n    read_file(path='notes/note01.md')\nprint('done')\n"
    channel = {}
    for label, code in (("100 calls", loop), ("no calls", "print('done')\n")):
        home = base / f"channel-{label.replace(' ', '-')}"
        home.mkdir()
        replies = [Reply.tool_call("execute_code", {"code": code}), Reply.say(ANSWER)]
        channel[label] = run(home, workspace, replies)["seconds"]
    steps = args.notes + 1
    print(
        f"task: {steps} tool calls (list {args.notes} notes of {args.note_chars} chars, read each)"
    )
    print(f"{'':14} {'requests':>9} {'prompt tokens':>14} {'bytes sent':>11} {'wall s':>7}")
    for way, figures in results.items():
        print(
            f"{way:14} {figures['requests']:9.0f} {figures['prompt_tokens']:14,.0f} "
            f"{figures['bytes']:11,.0f} {figures['seconds']:7.2f}"
        )
    rounds_figures, code_figures = results["tool rounds"], results["execute_code"]
    print(
        f"execute_code / tool rounds: requests {code_figures['requests'] / rounds_figures['requests']:.2f}x, "
        f"prompt tokens {code_figures['prompt_tokens'] / rounds_figures['prompt_tokens']:.2f}x, "
        f"wall {code_figures['seconds'] / rounds_figures['seconds']:.2f}x"
    )
    per_call = (channel["100 calls"] - channel["no calls"]) / 100 * 1000
    print(f"a script's tool call (read_file, local backend), channel and all: {per_call:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

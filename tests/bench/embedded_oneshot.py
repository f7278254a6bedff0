"""The embedded offline model's one-shot: `hermes chat -q` with no API key (SmolLM2-135M
through provider-local), cold and warm.

    uv run python tests/bench/embedded_oneshot.py [--runs 5]

Cold: the first run in a fresh HERMES_HOME (nothing evaluated yet). Warm: the median of the
next runs, which start from the prompt state the first one left in HERMES_HOME/cache/embedded.
The same warm runs with the prefix cache turned off (``embedded_model: {prefix_cache_mb: 0}``)
show what it saves. For each: wall time, and the time to the first byte of the reply on
stdout. Then three turns of one chat in one process (a system prompt of the one-shot's size),
the follow-ups timed to their first streamed token. The floor is `python -c` in the same run.

Targets: warm wall < 3 s, warm first output < 1.5 s (on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPT = "Say hi in three words."


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and seconds to the first byte on stdout."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    first = process.stdout.read(1)
    first_at = time.perf_counter() - started
    process.stdout.read()
    process.wait()
    wall = time.perf_counter() - started
    if process.returncode != 0 or not first:
        raise SystemExit(f"{' '.join(argv)} failed (exit {process.returncode})")
    return wall, first_at


def series(home: Path, runs: int, config: str) -> list[tuple[float, float]]:
    (home / "config.yaml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        env.pop(key, None)  # the ladder falls through to the embedded model
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["HERMES_HOME"] = str(home)
    hermes = str(Path(sys.executable).parent / "hermes")
    return [timed([hermes, "chat", "-q", PROMPT], env) for _ in range(runs)]


FOLLOW_UP = r"""
import asyncio, json, sys, time
from hermes_plugin_provider_local.engine import EmbeddedProvider
from hermes_plugin_provider_local.models import DEFAULT_MODEL
from hermes_sdk.models import ChatMessage, ModelRequest, ProviderSettings

system = ChatMessage("system", "You are Hermes, a personal agent. " + "Be brief and plain. " * 60)
provider = EmbeddedProvider(ProviderSettings(base_url="embedded:", home=sys.argv[1]))
history = [system]
figures = []

async def turn(text):
    history.append(ChatMessage("user", text))
    started = time.perf_counter()
    first = []
    def on_text(_piece):
        if not first:
            first.append(time.perf_counter() - started)
    answer = await provider.complete(
        ModelRequest(model=DEFAULT_MODEL, messages=tuple(history), max_tokens=24), on_text
    )
    history.append(ChatMessage("assistant", answer.content))
    figures.append((time.perf_counter() - started, first[0] if first else None))

async def main():
    for text in ("Hi, who are you?", "Say hi in three words.", "And in French?"):
        await turn(text)

asyncio.run(main())
print(json.dumps(figures))
"""


def follow_ups(home: Path) -> list[tuple[float, float]]:
    """The turns of one chat in one process: the first pays for the system prompt, the
    follow-ups evaluate only what is new (llama.cpp keeps its evaluated prefix)."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", FOLLOW_UP, str(home)], capture_output=True, text=True, check=True
    )
    return [tuple(pair) for pair in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(sys.prefix) / "lib")], check=False
    )
    floor = statistics.median(
        timed([sys.executable, "-c", "print(1)"], dict(os.environ))[0] for _ in range(5)
    )
    # A fixed seed: every run writes the same reply, so the runs differ only in what they
    # measure (a tiny model's reply varies from 10 to 500 tokens with the seed).
    cached = series(
        Path(tempfile.mkdtemp(prefix="hermes-embedded-")),
        args.runs + 1,
        "embedded_model:\n  seed: 1\n",
    )
    uncached = series(
        Path(tempfile.mkdtemp(prefix="hermes-embedded-")),
        args.runs + 1,
        "embedded_model:\n  seed: 1\n  prefix_cache_mb: 0\n",
    )

    def show(label: str, values: list[tuple[float, float]]) -> None:
        wall = statistics.median(v[0] for v in values)
        first = statistics.median(v[1] for v in values)
        print(f"{label:34} wall {wall:6.2f} s   first output {first:6.2f} s")

    print(f"runs: 1 cold + {args.runs} warm, each way; floor (python -c) {floor:.3f} s")
    show("cold (fresh home)", cached[:1])
    show("warm, prefix cache (median)", cached[1:])
    show("cold, no prefix cache", uncached[:1])
    show("warm, no prefix cache (median)", uncached[1:])
    chat = follow_ups(Path(tempfile.mkdtemp(prefix="hermes-embedded-")))
    for number, (wall, first) in enumerate(chat, start=1):
        label = "chat, first turn" if number == 1 else f"chat, follow-up turn {number - 1}"
        print(f"{label:34} wall {wall:6.2f} s   first token  {first or 0:6.2f} s")
    print("targets: warm wall < 3 s, warm first output < 1.5 s; follow-up turns likewise")
    return 0


if __name__ == "__main__":
    sys.exit(main())

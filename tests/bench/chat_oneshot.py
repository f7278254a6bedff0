"""Cold one-shot chat: `hermes chat -q hi` against a loopback model server, with the
standard distro installed (this workspace's environment: kernel, SDK, the openai, anthropic
and local providers).

    uv run python tests/bench/chat_oneshot.py [--runs 15]

Each run is a fresh process (bytecode compiled once beforehand, as an install does). The
floor is a Python process that imports httpx and makes the same POST (the very body hermes
sent) to the same server. Prints median wall time and peak RSS of both, their ratio, and the
size of the first request body for "hi" (every tool schema counts).

Targets: wall <= 1.7x the floor; peak RSS <= 60 MB. Past the target it prints the import
profile; past 2x the bench fails (exit status 1), so a creeping start-up cannot go unnoticed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from startup import measure_once  # noqa: E402  (the spawner that measures a child's peak RSS)

from hermes_testkit import Reply, ScriptedOpenAIServer  # noqa: E402

FLOOR = """
import sys, json, httpx
body = json.loads(open(sys.argv[2]).read())
response = httpx.post(sys.argv[1] + "/chat/completions", json=body,
                      headers={"Accept": "text/event-stream"}, timeout=30)
for line in response.iter_lines():
    pass
"""


TARGET_RATIO = 1.7
FAIL_RATIO = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--profile", action="store_true", help="print the import profile")
    args = parser.parse_args()
    hermes = Path(sys.executable).parent / "hermes"
    with ScriptedOpenAIServer(default=Reply.say("Hello! How can I help?")) as server:
        home = Path(tempfile.mkdtemp(prefix="hermes-bench-home-"))
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  default: test-model\n"
        )
        env = {key: value for key, value in os.environ.items() if not key.startswith("HERMES_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' installs have bytecode
        env["HERMES_HOME"] = str(home)
        argv = [str(hermes), "chat", "-q", "hi"]
        measure_once(argv, env)  # compile bytecode, fill the plugin discovery cache
        body = server.requests[-1].json
        body_path = home / "body.json"
        body_path.write_text(json.dumps(body))
        floor_argv = [sys.executable, "-c", FLOOR, server.base_url, str(body_path)]
        measure_once(floor_argv, env)
        ours: list[tuple[float, float]] = []
        floor: list[tuple[float, float]] = []
        for _ in range(args.runs):  # alternate, so machine noise hits both alike
            ours.append(measure_once(argv, env))
            floor.append(measure_once(floor_argv, env))
    size = len(json.dumps(body, separators=(",", ":")).encode())
    our_ms = statistics.median(t for t, _ in ours)
    floor_ms = statistics.median(t for t, _ in floor)
    our_rss = statistics.median(r for _, r in ours)
    floor_rss = statistics.median(r for _, r in floor)
    print(f"runs: {args.runs} of each, alternating")
    print(f"hermes chat -q hi   wall {our_ms:7.1f} ms   peak RSS {our_rss:5.1f} MiB")
    print(f"floor (httpx POST)  wall {floor_ms:7.1f} ms   peak RSS {floor_rss:5.1f} MiB")
    ratio = our_ms / floor_ms
    print(
        f"ratio (wall)        {ratio:.2f}x   (target <= {TARGET_RATIO}x; fails past {FAIL_RATIO}x)"
    )
    print(f"peak RSS            {our_rss * 1.048576:.1f} MB   (target <= 60 MB)")
    print(f"first request body  {size} bytes, {len(body.get('tools', []))} tool schemas")
    if ratio > TARGET_RATIO or args.profile:
        print_import_profile(argv, env)
    if ratio > FAIL_RATIO:
        print(f"FAILED: the one-shot is {ratio:.2f}x its floor, past {FAIL_RATIO}x")
        return 1
    return 0


def print_import_profile(argv: list[str], env: dict[str, str], top: int = 15) -> None:
    """The modules whose imports cost the most (cumulative, -X importtime), for finding
    what crept onto the one-shot path."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():  # "import time: SELF | CUMULATIVE | NAME"
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header, or anything else on stderr
        rows.append((int(fields[1]), int(fields[0]), fields[2].strip()))
    print(f"import profile, top {top} by cumulative time (us, self us, module):")
    for cumulative, self_us, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative:8d} {self_us:8d}  {name}")


if __name__ == "__main__":
    sys.exit(main())

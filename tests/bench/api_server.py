"""Latency the API server adds to a model call, at 1, 10 and 50 concurrent clients.

    uv run python tests/bench/api_server.py [--latency 0.3] [--requests 100]

The model is the scripted OpenAI-compatible server in a process of its own, answering every
request after ``--latency`` seconds. The floor is the same non-streamed chat completion sent
to the model by bare httpx; the measured call is a non-streamed request to a real
``hermes serve`` process, whose turn asks the model once (each client continues its own
session, as a chat UI does). Each line gives p50 and p99 of both, and the added latency
(Hermes minus the floor, at the same percentile).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

KEY = "bench-key"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_ready(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def run_clients(
    url: str, clients: int, each: int, body: dict, headers: dict, sessions: bool
) -> list[float]:
    """ms per request; each client sends ``each`` requests one after another."""
    times: list[float] = []
    limits = httpx.Limits(max_connections=clients + 5)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def one(index: int) -> None:
            session: str | None = None
            for _ in range(each):
                extra = {"X-Hermes-Session-Id": session} if session else {}
                started = time.perf_counter()
                response = await client.post(url, json=body, headers={**headers, **extra})
                times.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                if sessions:
                    session = response.headers["X-Hermes-Session-Id"]

        await asyncio.gather(*(one(i) for i in range(clients)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument(
        "--requests", type=int, default=100, help="per level; at least 10 per client"
    )
    parser.add_argument("--levels", type=int, nargs="*", default=[1, 10, 50])
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hermes-api-bench-"))
    model_port, api_port = free_port(), free_port()
    model = subprocess.Popen(
        [sys.executable, "-m", "hermes_testkit.openai_server", "--port", str(model_port),
         "--text", "ok", "--delay", str(args.latency)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    home = folder / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: http://127.0.0.1:{model_port}/v1\n  default: bench-model\n"
        "learning:\n  review: false\n  nudge_every_turns: 0\n"
    )
    (home / ".env").write_text(f"API_SERVER_KEY={KEY}\n")
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home)}
    server = subprocess.Popen(
        [str(hermes), "serve", "--port", str(api_port)], env=env, stderr=subprocess.DEVNULL
    )
    try:
        wait_ready(f"http://127.0.0.1:{model_port}/v1/models")
        wait_ready(f"http://127.0.0.1:{api_port}/health")
        question = {"messages": [{"role": "user", "content": "hi"}]}
        floor_url = f"http://127.0.0.1:{model_port}/v1/chat/completions"
        api_url = f"http://127.0.0.1:{api_port}/v1/chat/completions"
        auth = {"Authorization": f"Bearer {KEY}"}
        # Warm up both paths: imports, connections, the first session's prompt.
        asyncio.run(run_clients(floor_url, 2, 2, {"model": "bench-model", **question}, {}, False))
        asyncio.run(run_clients(api_url, 2, 2, {"model": "hermes", **question}, auth, True))
        print(f"model latency {args.latency * 1000:.0f} ms; ms per request (p50 / p99)")
        for clients in args.levels:
            each = max(10, args.requests // clients)  # a client's first opens its session
            floor = asyncio.run(
                run_clients(
                    floor_url, clients, each, {"model": "bench-model", **question}, {}, False
                )
            )
            api = asyncio.run(
                run_clients(api_url, clients, each, {"model": "hermes", **question}, auth, True)
            )
            f50, f99 = percentile(floor, 0.5), percentile(floor, 0.99)
            a50, a99 = percentile(api, 0.5), percentile(api, 0.99)
            print(
                f"{clients:>3} clients x {each:>3}: floor (bare httpx) {f50:7.1f} / {f99:7.1f}"
                f"   hermes serve {a50:7.1f} / {a99:7.1f}"
                f"   added {a50 - f50:6.1f} / {a99 - f99:6.1f}"
                f"   (mean added {statistics.mean(api) - statistics.mean(floor):.1f})"
            )
        rss = Path(f"/proc/{server.pid}/status").read_text().split("VmHWM:")[1].split()[0]
        print(f"hermes serve peak RSS: {int(rss) / 1024:.1f} MB")
    finally:
        server.terminate()
        model.terminate()
        server.wait(30)
        model.wait(10)


if __name__ == "__main__":
    main()

"""The web UI's weight and speed: the first page's bytes, how fast the pages answer, and
what a chat turn through the browser's API costs over the bare model call.

    uv run python tests/bench/web_ui.py [--requests 50]

The model is the scripted OpenAI-compatible server in a process of its own, answering at
once; the UI is a real ``hermes web`` process on a fresh home. Floors, measured in the same
run: for the pages, ``GET /health`` of the same server (routing, access checks, no page);
for a turn, the same chat completion sent to the model by bare httpx. A turn through the UI
is what the page's script does: POST /api/turns, then the server-sent events to the end.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from api_server import free_port, wait_ready

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def timed(call: object, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        call()  # type: ignore[operator]  # a bench: any callable
        times.append((time.perf_counter() - start) * 1000)
    return times


def p50(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    model_port, ui_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder, "home")
        home.mkdir()
        (home / "config.yaml").write_text(
            f"model:\n  base_url: http://127.0.0.1:{model_port}/v1\n  default: bench-model\n"
            "agent:\n  retries: 1\nlearning:\n  review: false\n",
            encoding="utf-8",
        )
        seed_board(home, BOARD_TASKS)
        env = {**os.environ, "HERMES_HOME": str(home)}
        model = subprocess.Popen(
            [sys.executable, "-m", "hermes_testkit.openai_server", "--port",
             str(model_port), "--text", "ok"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        ui = subprocess.Popen(
            [sys.executable, "-m", "hermes_kernel.cli.main", "web", "--port", str(ui_port)],
            env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        base = f"http://127.0.0.1:{ui_port}"
        try:
            wait_ready(f"http://127.0.0.1:{model_port}/v1/models")
            wait_ready(base + "/health")
            login_url = (home / "web-ui" / "login-url").read_text().strip()
            run(base, login_url, model_port, args.requests)
            runtime_ms = runtime_turns(home, args.requests)
            print(f"  the runtime alone {runtime_ms:6.2f} ms  (the same turn, in-process, no HTTP)")
        finally:
            ui.terminate()
            model.terminate()
            ui.wait(30)
            model.wait(30)


BOARD_TASKS = 200
"""Tasks on the bench home's board (a quarter done, each with a comment), for its page."""


def seed_board(home: Path, count: int) -> None:
    from hermes_plugin_kanban.board import Board
    from hermes_plugin_kanban.schema import SCHEMA

    from hermes_sdk.storage import open_store

    with open_store(home, SCHEMA) as store:
        board = Board(store)
        for number in range(count):
            task = board.create(f"Task {number}: tidy folder {number}", body="Sort it.")
            board.comment(task.id, "user", "the old files can go")
            if number % 4 == 0:
                board.complete(task.id, f"folder {number} is tidy")


def runtime_turns(home: Path, count: int) -> float:
    """p50 ms of the same turn run on the runtime in this process: the engine's share."""
    import asyncio

    from hermes_sdk.runtime import SessionOptions, open_runtime

    async def measure() -> float:
        async with open_runtime(home) as runtime:
            session = (await runtime.open_session(SessionOptions(source="bench"))).session_id
            times = []
            for index in range(count + 3):
                start = time.perf_counter()
                await runtime.start_turn(session, "hi").result()
                if index >= 3:
                    times.append((time.perf_counter() - start) * 1000)
            return p50(times)

    return asyncio.run(measure())


def run(base: str, login_url: str, model_port: int, count: int) -> None:
    client = httpx.Client(base_url=base, timeout=60, follow_redirects=True)
    client.get(login_url)  # the URL hermes web prints: this run's token logs the client in
    page = client.get("/chat")
    csrf = CSRF.search(page.text)
    assert csrf, "no CSRF token in the chat page"
    headers = {"X-CSRF-Token": csrf.group(1)}

    parts = {
        path: client.get(path).content for path in ("/chat", "/static/app.js", "/static/app.css")
    }
    raw = sum(len(body) for body in parts.values())
    packed = sum(len(gzip.compress(body)) for body in parts.values())
    print("first page (chat page + script + stylesheet):")
    for path, body in parts.items():
        print(f"  {path:<16} {len(body):>7,} bytes")
    print(f"  total            {raw:>7,} bytes ({packed:,} gzipped); target < 100,000")

    session = None

    def turn() -> None:
        nonlocal session
        sent = client.post(
            "/api/turns", json={"text": "hi", "session_id": session}, headers=headers
        )
        session = sent.json()["session_id"]
        with client.stream("GET", f"/api/sessions/{session}/events?after=-1") as events:
            for line in events.iter_lines():
                if line.startswith("data: ") and '"type": "ended"' in line:
                    break

    model_client = httpx.Client(timeout=60)  # one connection, as the agent keeps its own

    def bare_model() -> None:
        model_client.post(
            f"http://127.0.0.1:{model_port}/v1/chat/completions",
            json={"model": "bench-model", "messages": [{"role": "user", "content": "hi"}],
                  "stream": True},
        )  # fmt: skip

    for _ in range(3):  # warm: the session, the prompt, the connection
        turn()
    for _ in range(10):  # sessions and search have something to list
        client.post("/api/turns", json={"text": "/help"}, headers=headers)
    floor = p50(timed(lambda: client.get("/health"), count))
    print(f"\npages, p50 of {count} (floor: GET /health {floor:.2f} ms)")
    pages = ("/chat", f"/chat/{session}", "/sessions", "/sessions?q=hi", "/status", "/plugins")
    panels = (
        "/panels/settings",
        "/panels/cron",
        "/panels/gateway",
        "/panels/insights",
        "/panels/kanban",
    )
    for path in (*pages, *panels):
        taken = p50(timed(lambda path=path: client.get(path), count))
        shown = path.replace(session or "", "ID")
        print(f"  {shown:<16} {taken:7.2f} ms  {taken / floor:5.1f}x")
    model_ms = p50(timed(bare_model, count))
    turn_ms = p50(timed(turn, count))
    print(f"\na turn through the UI (post + events), p50 of {count}:")
    print(f"  bare model call  {model_ms:7.2f} ms")
    print(f"  through the UI   {turn_ms:7.2f} ms")


if __name__ == "__main__":
    main()

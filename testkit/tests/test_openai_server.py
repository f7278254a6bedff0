"""The scripted server itself: the wire format it speaks, and its command for manual runs."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request

from hermes_testkit import Reply, ScriptedOpenAIServer


def post(url: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_streams_openai_chunks_and_records_requests():
    with ScriptedOpenAIServer() as server:
        server.queue(Reply.tool_call("echo", {"a": 1}, chunk_size=2, repeat_ids=True))
        status, text = post(
            f"{server.base_url}/chat/completions",
            {"model": "m", "stream": True, "stream_options": {"include_usage": True}},
        )
        assert status == 200
        events = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        pieces = [
            c["choices"][0]["delta"]["tool_calls"][0]
            for c in chunks
            if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
        ]
        assert "".join(p["function"]["arguments"] for p in pieces) == '{"a": 1}'
        assert all(p["id"] == "call_0" for p in pieces), "ids repeated in every chunk"
        usage = chunks[-1]["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + 5 and usage["prompt_tokens"] > 0
        assert server.requests[0].json["model"] == "m"


def test_reported_prompt_tokens_grow_with_the_request_and_a_window_is_enforced():
    with ScriptedOpenAIServer() as server:
        server.respond = lambda _body: Reply.say("ok")
        short = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        long = {"model": "m", "messages": [{"role": "user", "content": "word " * 4000}]}
        small = json.loads(post(f"{server.base_url}/chat/completions", short)[1])["usage"]
        big = json.loads(post(f"{server.base_url}/chat/completions", long)[1])["usage"]
        assert 4000 < big["prompt_tokens"] < 6000 and small["prompt_tokens"] < 20
        server.context_window = 3000
        status, text = post(f"{server.base_url}/chat/completions", long)
        error = json.loads(text)["error"]
        assert status == 400 and error["code"] == "context_length_exceeded"
        assert "maximum context length is 3000 tokens" in error["message"]
        assert post(f"{server.base_url}/chat/completions", short)[0] == 200


def test_an_empty_queue_is_a_loud_500():
    with ScriptedOpenAIServer() as server:
        status, text = post(f"{server.base_url}/chat/completions", {"model": "m"})
        assert status == 500 and "no reply queued" in text


def test_the_command_serves_a_fixed_reply():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hermes_testkit.openai_server",
            "--port",
            str(port),
            "--text",
            "hi",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline().startswith(f"serving on http://127.0.0.1:{port}/v1")
        for _ in range(2):  # the default reply is served every time
            status, text = post(f"http://127.0.0.1:{port}/v1/chat/completions", {"model": "m"})
            assert status == 200 and json.loads(text)["choices"][0]["message"]["content"] == "hi"
    finally:
        process.terminate()
        process.wait(5)


def test_the_manual_server_starts_without_a_runtime_warning():
    """``python -m hermes_testkit.openai_server`` as the docs give it: no runpy warning."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "hermes_testkit.openai_server",
         "--port", "0", "--text", "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("serving on http://127.0.0.1:"), process.stderr.read()
    finally:
        process.kill()
        process.wait(timeout=10)

"""Streaming throughput of our providers against bare httpx, and the embedded model's time
to first token.

    uv run python tests/bench/streaming.py [--tokens 4000] [--runs 15]

Throughput: the scripted server streams one reply of ``--tokens`` chunks (one token each),
from its own process on loopback, so its work does not share the client's interpreter. Our provider reads it through ``complete(..., on_text)``; the floor reads the
same stream (same request body) with bare httpx, line by line, and also (second floor)
decoding each event's JSON, which any client must do. Runs alternate between provider and
floor so machine noise hits both alike. Ratio = our tokens/s / floor tokens/s; target >= 0.9.

Embedded model: time to first token of SmolLM2-135M through provider-local, cold (model
load included, first request of a process) and warm (median of later requests).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from hermes_plugin_provider_anthropic.client import MessagesProvider
from hermes_plugin_provider_anthropic.client import payload as anthropic_payload
from hermes_plugin_provider_openai.client import ChatCompletionsProvider
from hermes_plugin_provider_openai.client import payload as openai_payload

from hermes_sdk.models import ChatMessage, ModelRequest, ProviderSettings

REQUEST = ModelRequest("test-model", (ChatMessage("user", "Write a long story."),))


async def ours(provider: Any) -> tuple[float, int]:
    count = 0

    def on_text(_piece: str) -> None:
        nonlocal count
        count += 1

    started = time.perf_counter()
    await provider.complete(REQUEST, on_text)
    return time.perf_counter() - started, count


async def floor(client: httpx.AsyncClient, path: str, body: dict[str, Any], decode: bool) -> float:
    started = time.perf_counter()
    async with client.stream("POST", path, json=body) as response:
        async for line in response.aiter_lines():
            if decode and line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
    return time.perf_counter() - started


SERVER = """
import sys, threading
from hermes_testkit import Reply, ScriptedAnthropicServer, ScriptedOpenAIServer
kind = {"openai": ScriptedOpenAIServer, "anthropic": ScriptedAnthropicServer}[sys.argv[1]]
server = kind(default=Reply.say("tok " * int(sys.argv[2]), chunk_size=4)).start()
print(server.base_url, flush=True)
sys.stdin.read()  # serve until the bench closes our stdin
server.stop()
"""


@contextmanager
def server_process(kind: str, tokens: int) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, kind, str(tokens)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


async def measure(
    provider: Any,
    base_url: str,
    path: str,
    body: dict[str, Any],
    headers: dict[str, str],
    tokens: int,
    runs: int,
) -> dict[str, float]:
    times: dict[str, list[float]] = {"ours": [], "lines": [], "decoded": []}
    async with httpx.AsyncClient(base_url=base_url, headers=headers) as client:
        for run in range(runs + 1):  # the first round warms connections and caches up
            elapsed, count = await ours(provider)
            assert count == tokens, f"expected {tokens} pieces, got {count}"
            lines = await floor(client, path, body, decode=False)
            decoded = await floor(client, path, body, decode=True)
            if run:
                times["ours"].append(elapsed)
                times["lines"].append(lines)
                times["decoded"].append(decoded)
    await provider.aclose()
    return {name: tokens / statistics.median(values) for name, values in times.items()}


def throughput(tokens: int, runs: int) -> None:
    print(f"Streaming throughput, {tokens} tokens per reply, median of {runs} runs (tokens/s):")
    with server_process("openai", tokens) as base_url:
        settings = ProviderSettings(base_url=base_url, api_key="k")
        rates = asyncio.run(
            measure(
                ChatCompletionsProvider(settings),
                base_url,
                "/chat/completions",
                openai_payload(REQUEST, True),
                {"Authorization": "Bearer k"},
                tokens,
                runs,
            )
        )
        report("provider-openai", rates)
    with server_process("anthropic", tokens) as base_url:
        settings = ProviderSettings(base_url=base_url, api_key="k")
        rates = asyncio.run(
            measure(
                MessagesProvider(settings),
                base_url,
                "/v1/messages",
                anthropic_payload(REQUEST, True),
                {"x-api-key": "k", "anthropic-version": "2023-06-01"},
                tokens,
                runs,
            )
        )
        report("provider-anthropic", rates)


def report(name: str, rates: dict[str, float]) -> None:
    print(
        f"  {name:<19} ours {rates['ours']:>9,.0f}   bare httpx lines {rates['lines']:>9,.0f}"
        f" (ratio {rates['ours'] / rates['lines']:.2f})   lines+json {rates['decoded']:>9,.0f}"
        f" (ratio {rates['ours'] / rates['decoded']:.2f})"
    )


EMBEDDED = """
import asyncio, json, statistics, time
from hermes_plugin_provider_local.engine import EmbeddedProvider
from hermes_sdk.models import ChatMessage, ModelRequest, ProviderSettings

async def first_token(provider):
    started = time.perf_counter()
    first = []
    pieces = []
    def on_text(piece):
        if not first:
            first.append(time.perf_counter() - started)
        pieces.append(piece)
    request = ModelRequest("smollm2-135m-instruct", (ChatMessage("user", "Tell me about Paris."),),
                           max_tokens=128)
    await provider.complete(request, on_text)
    return first[0], len(pieces) / (time.perf_counter() - started - first[0])

async def main():
    provider = EmbeddedProvider(ProviderSettings("embedded:", options={"models_dir": "/nonexistent"}))
    cold, _ = await first_token(provider)
    warm = [await first_token(provider) for _ in range(RUNS)]
    print(json.dumps({"cold": cold, "warm": statistics.median(w[0] for w in warm),
                      "rate": statistics.median(w[1] for w in warm)}))

asyncio.run(main())
"""


def embedded(runs: int) -> None:
    code = EMBEDDED.replace("RUNS", str(runs))
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(output.strip().splitlines()[-1])
    print("Embedded SmolLM2-135M (provider-local, in-process llama.cpp via xllamacpp):")
    print(f"  time to first token, cold (new process, model load included): {result['cold']:.3f} s")
    print(
        f"  time to first token, warm (median of {runs}):                   {result['warm']:.3f} s"
    )
    print(
        f"  generation after the first token:                              {result['rate']:.0f} tokens/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # As in the gateway, whose costs these figures are: requests go over pooled aiohttp.
    from hermes_commons.http_transport import expect_many_requests

    expect_many_requests()
    throughput(args.tokens, args.runs)
    embedded(min(args.runs, 8))


if __name__ == "__main__":
    main()

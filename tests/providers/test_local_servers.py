"""A model server already running on this machine is found when nothing else is configured
(Ollama, LM Studio, vLLM, llama.cpp's server, on their usual loopback ports, or where
``local_servers.servers`` says), used before the embedded model, and said in one line;
something else listening on such a port is passed over."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from hermes_plugin_provider_openai.discover import USUAL_PLACES, Place, endpoint_of

from hermes_testkit import Reply, ScriptedOpenAIServer


@pytest.fixture
def web_server() -> Iterator[str]:
    """Not a model server: a plain web server that knows no /v1/models."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_error(404)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _servers(*places: tuple[str, str]) -> str:
    lines = "".join(
        f"    - {{name: {name}, label: {name}, url: '{url}'}}\n" for name, url in places
    )
    return f"local_servers:\n  servers:\n{lines}"


def test_a_server_on_loopback_is_found_and_said_in_one_line(hermes, web_server) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as server:
        root = server.base_url.removesuffix("/v1")
        hermes.config(_servers(("webapp", web_server), ("lmstudio", root)))
        server.queue(Reply.say("Hello from the machine's own server."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Hello from the machine's own server.\n"
        (asked,) = server.requests
    assert asked.json["model"] == "test-model"  # the first the server lists
    said = [line for line in result.err.splitlines() if "Using lmstudio found at" in line]
    assert len(said) == 1 and f"{root}/v1" in said[0], result.err
    explained = hermes("model", "--explain")
    assert "local-server" in explained.out


def test_discovery_can_be_turned_off(hermes) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as server:
        root = server.base_url.removesuffix("/v1")
        hermes.config(_servers(("lmstudio", root)) + "  discover: false\n")
        result = hermes("model", "--explain")
        assert not server.requests
    assert "local_servers.discover is false" in result.out


def test_a_server_that_does_not_serve_the_model_asked_for_is_passed_over(hermes) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as server:
        root = server.base_url.removesuffix("/v1")
        hermes.config(_servers(("ollama", root)) + "model:\n  default: qwen3:32b\n")
        result = hermes("model", "--explain")
        assert not server.requests  # listed its models, was not asked to answer
    assert "In use: ollama" not in result.out


def test_the_usual_places_are_the_four_servers_default_ports() -> None:
    assert [(place.label, place.url) for place in USUAL_PLACES] == [
        ("Ollama", "http://127.0.0.1:11434"),
        ("LM Studio", "http://127.0.0.1:1234"),
        ("vLLM", "http://127.0.0.1:8000"),
        ("llama.cpp's server", "http://127.0.0.1:8080"),
    ]


def test_an_embedding_model_listed_first_is_not_the_default() -> None:
    place = Place("ollama", "Ollama", "http://127.0.0.1:11434")
    endpoint = endpoint_of(place, ["nomic-embed-text:latest", "llama3.2:latest"])
    assert endpoint.default_model == "llama3.2:latest"
    assert endpoint.base_url == "http://127.0.0.1:11434/v1"

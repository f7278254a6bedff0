"""``hermes status`` and ``hermes doctor`` say whether the Docker daemon answers, when Docker
is the backend tools use: against a real daemon, and against an address where none runs."""

from __future__ import annotations

from typing import Any

from hermes_plugin_backend_docker.health import daemon_findings, daemon_status

from hermes_sdk.health import HealthContext


def context(host: str, backend: str = "docker") -> HealthContext:
    config: dict[str, Any] = {"agent": {"backend": backend}, "docker": {"host": host}}
    return HealthContext(home="/nowhere", config=config)


def test_nothing_is_said_when_another_backend_is_in_use() -> None:
    assert daemon_status(context("tcp://127.0.0.1:9", backend="local")) == []
    assert daemon_findings(context("tcp://127.0.0.1:9", backend="local")) == []


def test_a_daemon_that_does_not_answer_is_an_error_with_the_way_out() -> None:
    (finding,) = daemon_findings(context("tcp://127.0.0.1:9"))
    assert finding.level == "error"
    assert "the Docker daemon does not answer (nothing answers at tcp://127.0.0.1:9)" in (
        finding.message
    )
    assert "hermes config set agent.backend local" in finding.fix
    (line,) = daemon_status(context("tcp://127.0.0.1:9"))
    assert line.label == "Docker" and "does not answer" in line.text


def test_a_daemon_that_answers_says_its_version(docker_url: str) -> None:
    (finding,) = daemon_findings(context(docker_url))
    assert finding.level == "ok" and finding.message.startswith("terminal backend docker: Docker")
    (line,) = daemon_status(context(docker_url))
    assert line.text.startswith("the daemon answers (Docker ")

"""Overhead of a trivial command (`true`) through each terminal backend, against running it
directly over the same channel, measured in the same run.

    uv run python tests/bench/backends.py [--runs 200]

Floors: local, ``subprocess.run([shell, "-c", "true"], capture_output=True)`` with the
backend's shell; docker,
``exec_run`` of the docker SDK on the same container (and the ``docker exec`` CLI, for
scale); ssh, a bare paramiko ``exec_command`` on the same connection. "through the tool
path" adds what a tool call adds: the approval check (GuardedBackend) and a cancel event.
Medians of interleaved runs. Target: <= 1.2x. Needs root for dockerd and sshd.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator

import docker
import paramiko
from hermes_plugin_approvals import ShellRules
from hermes_plugin_backend_docker.backend import DockerBackend
from hermes_plugin_backend_docker.config import DockerConfig
from hermes_plugin_backend_local.backend import LocalBackend
from hermes_plugin_backend_ssh.backend import SSHBackend
from hermes_plugin_backend_ssh.config import SSHConfig

from hermes_kernel.safety.approval import Approvals
from hermes_kernel.tooling.backends import BackendPool, GuardedBackend
from hermes_sdk.terminal import BackendContext, TerminalBackend
from hermes_testkit.services import busybox_image, docker_daemon, sshd_server


def median_ms(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def guarded(backend: TerminalBackend) -> GuardedBackend:
    pool = BackendPool(
        backend.name,
        lambda name: None,
        home="/nonexistent",
        cwd="/",
        env={},
        config={},
        approvals=Approvals(rules=lambda: [ShellRules()]),
    )
    return GuardedBackend(backend, pool, "bench")


def compare(name: str, floor: Callable[[], object], backend: TerminalBackend, runs: int) -> None:
    tool = guarded(backend)
    cancel = threading.Event()
    candidates = {
        "floor": floor,
        "backend.run": lambda: backend.run("true"),
        "through the tool path": lambda: tool.run("true", timeout=180, cancel=cancel),
    }
    for action in candidates.values():  # warm up
        for _ in range(5):
            action()
    results: dict[str, list[float]] = {key: [] for key in candidates}
    for _ in range(5):  # interleaved rounds, so drift hits every candidate alike
        for key, action in candidates.items():
            results[key].append(median_ms(action, max(runs // 5, 1)))
    floor_ms = statistics.median(results["floor"])
    print(f"{name}: floor {floor_ms:.2f} ms")
    for key in ("backend.run", "through the tool path"):
        value = statistics.median(results[key])
        print(f"  {key}: {value:.2f} ms  ({value / floor_ms:.2f}x the floor)")


@contextlib.contextmanager
def local_case() -> Iterator[tuple[Callable[[], object], TerminalBackend]]:
    with tempfile.TemporaryDirectory() as folder:
        backend = LocalBackend(folder, {"PATH": os.environ["PATH"]})
        shell = backend.shell

        def floor() -> object:
            return subprocess.run(
                [shell, "-c", "true"],
                cwd=folder,
                env={"PATH": os.environ["PATH"]},
                capture_output=True,  # a tool needs the output, so the floor reads it too
                check=True,
            )

        yield floor, backend


@contextlib.contextmanager
def docker_case() -> Iterator[tuple[Callable[[], object], TerminalBackend]]:
    with docker_daemon() as url, tempfile.TemporaryDirectory() as folder:
        image = busybox_image(url)
        context = BackendContext(session_id="bench", home=folder, cwd=folder)
        backend = DockerBackend(context, DockerConfig(host=url, image=image, network="none"))
        container = docker.DockerClient(base_url=url).containers.get(backend.container_id)
        try:
            started = time.perf_counter()
            subprocess.run(["docker", "-H", url, "exec", backend.container_id, "true"], check=True)
            print(f"(docker exec CLI, once: {(time.perf_counter() - started) * 1000:.1f} ms)")
            yield (lambda: container.exec_run(["true"])), backend
        finally:
            backend.close()


@contextlib.contextmanager
def ssh_case() -> Iterator[tuple[Callable[[], object], TerminalBackend]]:
    with sshd_server() as server:
        config = SSHConfig(
            host=server.host,
            port=server.port,
            user=server.user,
            key_file=server.key_file,
            known_hosts=server.known_hosts,
            use_agent=False,
        )
        backend = SSHBackend(config)
        transport = backend.client.get_transport()
        assert transport is not None

        def floor() -> object:
            channel = transport.open_session()
            channel.exec_command("true")
            status = channel.recv_exit_status()
            channel.close()
            return status

        try:
            yield floor, backend
        finally:
            backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    for name, case in (("local", local_case), ("docker", docker_case), ("ssh", ssh_case)):
        with case() as (floor, backend):
            compare(name, floor, backend, args.runs)


if __name__ == "__main__":
    paramiko.util.log_to_file(os.devnull)
    main()

"""Containers a crashed Hermes left behind are removed at the next start, and another
process's containers coming and going meanwhile never make that start fail."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import docker
import pytest
from hermes_plugin_backend_docker.backend import LABEL, OWNER_LABEL, reap_orphans


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def _labelled(client: docker.DockerClient, image: str, pid: int) -> str:
    owner = f"{socket.gethostname()}:{pid}"
    container = client.api.create_container(
        image, "true", labels={LABEL: "test", OWNER_LABEL: owner}
    )
    return str(container["Id"])


@pytest.fixture
def client(docker_url: str) -> docker.DockerClient:
    return docker.DockerClient(base_url=docker_url)


def test_a_dead_owners_container_is_removed_and_a_live_ones_kept(client, docker_test_image):
    orphan = _labelled(client, docker_test_image, _dead_pid())
    ours = _labelled(client, docker_test_image, os.getpid())
    try:
        # Any Hermes starting a Docker backend on this machine meanwhile (another test's)
        # sweeps too and may remove it first: what counts is that it is gone.
        reap_orphans(client)
        ids = {c["Id"] for c in client.api.containers(all=True, filters={"label": LABEL})}
        assert orphan not in ids
        assert ours in ids
    finally:
        client.api.remove_container(ours, force=True)


def test_containers_removed_meanwhile_never_fail_the_reaping(client, docker_test_image):
    # Another Hermes closing its containers while this one starts: listed, then gone.
    stop = threading.Event()
    failures: list[BaseException] = []

    def churn() -> None:
        while not stop.is_set():
            container = _labelled(client, docker_test_image, os.getpid())
            client.api.remove_container(container, force=True)

    workers = [threading.Thread(target=churn) for _ in range(3)]
    for worker in workers:
        worker.start()
    try:
        for _ in range(60):
            try:
                reap_orphans(client)
            except Exception as exc:  # noqa: BLE001 - collected for the assertion
                failures.append(exc)
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    assert not failures, failures[0]

"""Services in a real ``hermes gateway run`` process: one that fails at start and dies later
is reported and restarted; one that never starts stays reported; the platform keeps
answering meanwhile; a service's turn and delivery go through the gateway's runtime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_testkit import Reply

from .conftest import OWNER, polling, wait_until

SERVICES_PLUGIN = '''
import asyncio
from pathlib import Path

from hermes_sdk import ServiceSpec, hookimpl
from hermes_sdk.runtime import SessionOptions


class Flaky:
    """Fails at its first start, works and then dies at its second, keeps running after."""

    def __init__(self, context):
        self.home = Path(context.home)

    async def run(self, runtime):
        marker = self.home / "flaky-starts"
        starts = int(marker.read_text()) if marker.exists() else 0
        marker.write_text(str(starts + 1))
        if starts == 0:
            raise RuntimeError("could not bind its port")
        if starts == 1:
            session = await runtime.open_session(SessionOptions(source="flaky"))
            ended = await runtime.start_turn(session.session_id, "hello from a service").result()
            delivery = await runtime.deliver("telegram", "{owner}", f"service says: {{ended.reply}}")
            (self.home / "flaky-delivery").write_text(delivery.state)
            raise RuntimeError("died after its work")
        await asyncio.Event().wait()


def broken(context):
    raise ValueError("the factory is broken")


@hookimpl
def hermes_services():
    yield ServiceSpec(name="flaky", description="fails, then works", factory=Flaky,
                      enabled_by_default=True)
    yield ServiceSpec(name="broken", description="never starts", factory=broken,
                      enabled_by_default=True)
    yield ServiceSpec(name="dormant", description="off unless enabled", factory=broken)
'''


@pytest.fixture
def services_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin distribution on PYTHONPATH (found through its entry points, like any)."""
    site = tmp_path / "site"
    dist = site / "flaky_services-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "flaky_services.py").write_text(SERVICES_PLUGIN.format(owner=OWNER))
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flaky-services\nVersion: 0.1\nRequires-Dist: hermes-sdk\n"
    )
    (dist / "entry_points.txt").write_text("[hermes.plugins]\nflaky-services = flaky_services\n")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    return site


def status(home: Path) -> dict:
    try:
        return json.loads((home / "gateway" / "status.json").read_text()).get("services") or {}
    except (OSError, ValueError):
        return {}


def test_failing_services_are_reported_and_restarted_while_platforms_answer(
    services_plugin, gateway_process, gateway_home, telegram, openai_server, hermes
):
    openai_server.queue(Reply.say("the service's answer"), Reply.say("the platform answers"))
    process = gateway_process(gateway="  stream: false\n")
    home = hermes.home
    polling(telegram)
    wait_until((home / "flaky-delivery").exists)
    telegram.wait_for_message(OWNER, "service says: the service's answer")
    telegram.user_says(OWNER, "are you there?")
    telegram.wait_for_message(OWNER, "the platform answers")
    wait_until(
        lambda: (
            status(home).get("flaky", {}).get("state") == "running"
            and status(home)["flaky"]["restarts"] == 2
        )
    )
    report = status(home)
    assert report["broken"]["state"] == "failed"
    assert "the factory is broken" in report["broken"]["error"]
    assert report["broken"]["restarts"] >= 1
    assert "dormant" not in report  # not enabled
    shown = subprocess.run(
        [sys.executable, "-m", "hermes_kernel.cli.main", "gateway", "status"],
        env={**os.environ, "HERMES_HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "Services:" in shown.stdout
    assert "flaky: running; restarted 2 times" in shown.stdout
    assert "broken: failed (could not start: the factory is broken)" in shown.stdout
    assert process.terminate() == 0
    log = (home / "logs" / "gateway.log").read_text()
    assert "service flaky failed: could not bind its port" in log


def test_a_front_end_in_another_process_delivers_through_the_running_gateway(
    gateway_process, gateway_home, telegram, openai_server, hermes
):
    import asyncio

    from hermes_sdk.runtime import open_runtime

    process = gateway_process(gateway="  stream: false\n")
    polling(telegram)

    async def deliver():
        async with open_runtime(hermes.home) as runtime:
            return await runtime.deliver("telegram", str(OWNER), "a note from a scheduled job")

    delivery = asyncio.run(deliver())
    assert delivery.state == "queued"
    telegram.wait_for_message(OWNER, "a note from a scheduled job")
    assert process.terminate() == 0


def test_a_runtime_beside_the_gateway_in_its_process_delivers_through_the_ledger(
    running_gateway, telegram, hermes
):
    """No registry of gateways per process: a runtime of its own, even in the gateway's
    process, records in the ledger the gateway sends from (its services use the gateway's
    runtime, which sends straight out)."""
    import asyncio

    from hermes_sdk.runtime import open_runtime

    running_gateway(gateway="  stream: false\n")

    async def deliver():
        async with open_runtime(hermes.home) as runtime:  # its own event loop, this thread's
            return await runtime.deliver("telegram", str(OWNER), "a note from beside it")

    delivery = asyncio.run(deliver())
    assert delivery.state == "queued"
    telegram.wait_for_message(OWNER, "a note from beside it")

"""The gateway's lines in ``hermes status`` (from its pid lock and status file) and its
finding in ``hermes doctor`` (a platform open to anyone)."""

from __future__ import annotations

import os

from hermes_plugin_gateway.health import doctor_checks, status_lines
from hermes_plugin_gateway.status import PidLock, write_status

from hermes_sdk import DeliverySpec, HealthContext, Kind
from hermes_sdk.provided import ProvidedSpecs


def test_a_stopped_gateway_is_one_line_saying_how_to_start_it(home):
    write_status(home, {"state": "running", "pid": 1})  # left by a gateway that was killed
    (line,) = status_lines(HealthContext(home=str(home)))
    assert (line.label, line.text) == ("Gateway", "not running (hermes gateway run)")


def test_a_running_gateway_lists_its_platforms_and_services(home):
    lock = PidLock(home)
    lock.acquire()  # as the running gateway holds it
    try:
        write_status(
            home,
            {
                "state": "running",
                "pid": os.getpid(),
                "started_at": 1_700_000_000.0,
                "platforms": {"telegram": {"state": "running", "error": ""}},
                "services": {"cron": {"state": "failed", "error": "no folder"}},
            },
        )
        (line,) = status_lines(HealthContext(home=str(home)))
    finally:
        lock.release()
    assert line.text.startswith(f"running (pid {os.getpid()}) since ")
    assert line.details == ("platform telegram: running", "service cron: failed (no folder)")


DELIVERS = ProvidedSpecs(
    {Kind.DELIVERY: [DeliverySpec(name="ledger", description="d", factory="x.y:Z")]}
)


def test_doctor_warns_of_a_platform_open_to_anyone(home):
    config = {"platforms": {"telegram": {"allow_all": True}, "matrix": {"allowed_users": ["1"]}}}
    (finding,) = doctor_checks(HealthContext(home=str(home), config=config, provided=DELIVERS))
    assert finding.level == "warning" and "platforms.telegram.allow_all is on" in finding.message
    assert "allowed_users" in finding.fix
    context = HealthContext(home=str(home), config={"platforms": "x"}, provided=DELIVERS)
    assert list(doctor_checks(context)) == []


def test_doctor_says_what_to_install_when_nothing_delivers(home):
    (finding,) = doctor_checks(HealthContext(home=str(home)))
    assert finding.level == "warning" and "hermes send" in finding.message
    assert finding.fix == "hermes plugins install hermes-plugin-delivery"

"""``hermes gateway install | uninstall | start | restart`` (and the gateway's own ``stop`` and
``status`` beside them) as a user runs them: the real
``hermes`` in a throwaway HOME (nothing reaches the real ~/.config), the unit checked by the
real ``systemd-analyze``. No systemd runs here, and the tests make sure none is reached (an
empty XDG_RUNTIME_DIR): every command that needs ``systemctl --user`` must say so in one
line and leave nothing half-done. The launchd plist is checked as data (no macOS here)."""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hermes_plugin_service_host.launchd import LaunchAgent, render_plist
from hermes_plugin_service_host.manager import ServiceError, ServicePlan
from hermes_plugin_service_host.plan import service_slug
from hermes_plugin_service_host.systemd import SystemdUserService, render_unit

from hermes_testkit import ScriptedOpenAIServer

HERMES = str(Path(sys.executable).parent / "hermes")
Run = Callable[..., subprocess.CompletedProcess[str]]
OTHER_PLATFORMS = "platform-discord,platform-email,platform-matrix,platform-slack,platform-webhook"


def _analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        reason = "systemd-analyze is not installed (apt-get install systemd)"
        if os.environ.get("HERMES_REQUIRE_SERVICES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A user's home folder of its own; HERMES_HOME is its ~/.hermes unless a test says."""
    path = tmp_path / "user"
    (path / ".hermes").mkdir(parents=True)
    (path / "work").mkdir()
    return path


@pytest.fixture
def hermes(user: Path, tmp_path: Path) -> Run:
    runtime = tmp_path / "runtime"  # no systemd user manager listens here
    runtime.mkdir(mode=0o700)
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "XDG_")) and k != "DBUS_SESSION_BUS_ADDRESS"
    }
    environ.update(
        HOME=str(user),
        XDG_CONFIG_HOME=str(user / "config"),  # not ~/.config: install must honour it
        XDG_RUNTIME_DIR=str(runtime),
    )

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [HERMES, *args],
            env={**environ, **(env or {})},
            cwd=user / "work",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    return run


def unit_dir(user: Path) -> Path:
    return user / "config" / "systemd" / "user"


def verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The real systemd-analyze on the unit as installed: a user unit needs a runtime folder,
    which a scratch one serves (no manager needs to run)."""
    # Short: systemd reads the user's socket units too, and a socket path in a deep pytest
    # folder (a worker's) passes the 108 bytes a socket address may hold.
    with tempfile.TemporaryDirectory(prefix="hermes-rt-", dir="/tmp") as runtime:
        return subprocess.run(
            [_analyze(), "--user", "verify", str(unit)],
            env={**os.environ, "XDG_RUNTIME_DIR": runtime},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def settings(unit: Path) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in unit.read_text().splitlines():
        key, equals, value = line.partition("=")
        if equals and not line.startswith("#"):
            values.setdefault(key, []).append(value)
    return values


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    return line


def test_install_no_start_writes_a_unit_systemd_analyze_accepts(
    hermes: Run, user: Path, tmp_path: Path
) -> None:
    _analyze()
    done = hermes("gateway", "install", "--no-start")
    assert done.returncode == 0, done.stderr
    unit = unit_dir(user) / "hermes-gateway.service"
    assert done.stdout.splitlines() == [
        f"Wrote {unit} (checked with systemd-analyze verify).",
        f"Sessions start in {user / 'work'}; its output: hermes logs gateway-output.",
        "Start it (now and at each login): hermes gateway start",
    ]
    checked = verify(unit, tmp_path)
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")

    values = settings(unit)
    command = shlex.split(values["ExecStart"][0])
    assert command == [HERMES, "gateway", "run"]
    assert os.path.isabs(command[0]) and os.access(command[0], os.X_OK)
    home = user / ".hermes"
    assert values["WorkingDirectory"] == [str(user / "work")]
    environment = dict(v.partition("=")[::2] for v in values["Environment"])
    assert environment["HERMES_HOME"] == str(home)
    assert environment["HERMES_PROFILE"] == "default"  # `hermes profile use` cannot move it
    assert environment["HERMES_LOG_STDERR"] == "0"
    absolute = [p for p in os.environ["PATH"].split(os.pathsep) if p and os.path.isabs(p)]
    assert environment["PATH"] == os.pathsep.join(dict.fromkeys(absolute))  # never "." or ""
    output = home / "logs" / "gateway-output.log"
    assert values["StandardOutput"] == values["StandardError"] == [f"append:{output}"]
    assert output.parent.is_dir()  # systemd opens the file, not its folder
    assert values["Restart"] == ["on-failure"]
    assert values["TimeoutStopSec"] == ["90"]  # drain_seconds 30: 2 x 30 + 30
    for hardening in ("NoNewPrivileges", "PrivateTmp"):
        assert values[hardening] == ["true"]
    assert values["ProtectSystem"] == ["strict"]
    assert values["ReadWritePaths"] == [f"{home} {user / 'work'}"]
    assert values["WantedBy"] == ["default.target"]
    assert not (user / ".config").exists()  # XDG_CONFIG_HOME was honoured

    again = hermes("gateway", "install", "--no-start")
    assert again.returncode == 0 and again.stdout.startswith(f"Unchanged {unit} ")


def test_without_a_reachable_systemd_each_command_says_so_and_changes_nothing(
    hermes: Run, user: Path
) -> None:
    unit = unit_dir(user) / "hermes-gateway.service"
    line = one_line(hermes("gateway", "install"))
    assert line.startswith("Error: systemctl --user cannot reach your systemd user manager (")
    assert "loginctl enable-linger" in line and "`hermes gateway run`" in line
    assert not unit_dir(user).exists()
    assert not (user / ".hermes" / "logs").exists()

    line = one_line(hermes("gateway", "start"))
    assert line.startswith("Error: no systemd user service is installed for this home (")

    assert hermes("gateway", "install", "--no-start").returncode == 0
    written = unit.read_bytes()
    for command in ("start", "restart"):
        line = one_line(hermes("gateway", command))
        assert "cannot reach your systemd user manager" in line, command
    stopped = hermes("gateway", "stop")  # nothing runs: nothing to stop, whoever started it
    assert (stopped.returncode, stopped.stdout) == (
        0,
        "The gateway is not running. (its service hermes-gateway.service may be starting: "
        "hermes status)\n",
    )
    assert json.loads((user / ".hermes" / "gateway" / "service.json").read_text()) == {
        "name": "hermes-gateway.service",
        "kind": "systemd user service",
        "path": str(unit),
    }
    status = hermes("gateway", "status")
    assert status.returncode == 1
    assert status.stdout.splitlines() == [
        "The gateway is not running. Start it with: hermes gateway start",
        f"Service: hermes-gateway.service (systemd user service), {unit}",
    ]
    said = hermes("status").stdout  # the service's own line: its manager cannot be asked
    assert "hermes-gateway.service (systemd user service): state unknown" in said

    # Enabled (systemctl enable links it here), it cannot be removed without systemd.
    wants = unit_dir(user) / "default.target.wants"
    wants.mkdir()
    (wants / unit.name).symlink_to(unit)
    line = one_line(hermes("gateway", "uninstall"))
    assert "cannot reach your systemd user manager" in line
    assert unit.read_bytes() == written
    (wants / unit.name).unlink()
    # Never enabled: nothing runs it, so only the file goes.
    removed = hermes("gateway", "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == f"Removed {unit} (it was never enabled).\n"
    assert not unit.exists()
    assert hermes("gateway", "uninstall").stdout.startswith("No systemd user service is")
    assert not (user / ".hermes" / "gateway" / "service.json").exists()
    status = hermes("gateway", "status")
    assert status.stdout == "The gateway is not running. Start it with: hermes gateway run\n"
    assert "not installed (hermes gateway install)" in hermes("status").stdout


def test_a_unit_that_differs_is_replaced_only_with_force(hermes: Run, user: Path) -> None:
    assert hermes("gateway", "install", "--no-start").returncode == 0
    unit = unit_dir(user) / "hermes-gateway.service"
    before = unit.read_text()
    elsewhere = user / "projects"
    elsewhere.mkdir()

    refused = hermes("gateway", "install", "--no-start", "--workdir", str(elsewhere))
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        f"Error: {unit} differs from what install writes now (- there, + install):",
        f"  -WorkingDirectory={user / 'work'}",
        f"  +WorkingDirectory={elsewhere}",
        f"  -ReadWritePaths={user / '.hermes'} {user / 'work'}",
        f"  +ReadWritePaths={user / '.hermes'} {elsewhere}",
        "Keep it, or replace it with: hermes gateway install --force",
    ]
    assert unit.read_text() == before

    forced = hermes("gateway", "install", "--no-start", "--force", "--workdir", str(elsewhere))
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.startswith(f"Replaced {unit} (checked with systemd-analyze verify).")
    assert f"WorkingDirectory={elsewhere}\n" in unit.read_text()


def test_a_profile_and_another_home_get_units_of_their_own(
    hermes: Run, user: Path, tmp_path: Path
) -> None:
    _analyze()
    assert hermes("profile", "create", "work").returncode == 0
    done = hermes("-p", "work", "gateway", "install", "--no-start")
    assert done.returncode == 0, done.stderr
    unit = unit_dir(user) / "hermes-gateway-work.service"
    profile_home = user / ".hermes" / "profiles" / "work"
    assert f"Environment=HERMES_HOME={profile_home}\n" in unit.read_text()

    # Another home, with a space and a % in its path: quoted, and % is not a specifier.
    other = tmp_path / "agent 100%"
    other.mkdir()
    done = hermes("gateway", "install", "--no-start", env={"HERMES_HOME": str(other)})
    assert done.returncode == 0, done.stderr
    (unit,) = (p for p in unit_dir(user).iterdir() if p.name.startswith("hermes-gateway-agent"))
    assert unit.name == f"hermes-gateway-{service_slug(other, user)}.service"
    text = unit.read_text()
    assert f'Environment="HERMES_HOME={tmp_path}/agent 100%%"\n' in text
    assert f"StandardOutput=append:{tmp_path}/agent 100%%/logs/gateway-output.log\n" in text
    checked = verify(unit, tmp_path)
    assert (checked.returncode, checked.stderr) == (0, "")
    assert sorted(p.name for p in unit_dir(user).iterdir()) == sorted(
        [unit.name, "hermes-gateway-work.service"]
    )


def test_the_unit_runs_the_gateway_with_its_output_where_hermes_logs_reads(
    hermes: Run, user: Path, openai_server: ScriptedOpenAIServer
) -> None:
    """The unit's command, folder and environment, run as systemd would (stdout and stderr
    appended to the output file, SIGTERM to stop): records go to gateway.log once, and the
    output file holds only what is not a record."""
    home = user / ".hermes"
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\ngateway:\n  drain_seconds: 2\n",
        encoding="utf-8",
    )
    assert hermes("gateway", "install", "--no-start").returncode == 0
    values = settings(unit_dir(user) / "hermes-gateway.service")
    assert values["TimeoutStopSec"] == ["34"]  # follows gateway.drain_seconds
    environment = dict(v.partition("=")[::2] for v in values["Environment"])
    # One platform (not set up: an error record) is enough; the others only slow its start.
    environment["HERMES_DISABLE_PLUGINS"] = OTHER_PLATFORMS
    output = Path(values["StandardOutput"][0].removeprefix("append:"))
    with output.open("ab") as appended:
        process = subprocess.Popen(
            shlex.split(values["ExecStart"][0]),
            cwd=values["WorkingDirectory"][0],
            env={"HOME": str(user), **environment},
            stdout=appended,
            stderr=appended,
        )
    try:
        deadline = time.monotonic() + 30
        # It says so once SIGTERM drains it (before, a stop signal ends it at once).
        while "hermes gateway running" not in output.read_text():
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.3)
        assert hermes("gateway", "status").returncode == 0
        stopped = hermes("gateway", "stop")  # by its pid: the service manager is not asked
        assert stopped.stdout == (
            f"Stopped the gateway (pid {process.pid}). Its service hermes-gateway.service, if "
            "enabled, starts it again at the next login; now: hermes gateway start\n"
        )
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        code = process.wait(30)
    assert code == 0
    assert output.read_text().splitlines() == [
        f"hermes gateway running (pid {process.pid}); stop with: hermes gateway stop",
        "hermes gateway stopped",
    ]
    shown = hermes("logs", "gateway-output")
    assert shown.returncode == 0 and "hermes gateway stopped" in shown.stdout
    record = "ERROR hermes.gateway: platform telegram is not configured"
    assert (home / "logs" / "gateway.log").read_text().count(record) == 1


def plan(tmp_path: Path, command: str) -> ServicePlan:
    home = tmp_path / "home"
    return ServicePlan(
        slug=None,
        home=home,
        command=(command, "gateway", "run"),
        workdir=tmp_path,
        writable=(home, tmp_path),
        output=home / "logs" / "gateway-output.log",
        drain_seconds=30.0,
        stop_seconds=90,
        path="/usr/bin:/bin",
    )


def test_a_unit_systemd_analyze_rejects_is_not_written(tmp_path: Path) -> None:
    _analyze()
    service = SystemdUserService(None, {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "c")})
    text = render_unit(plan(tmp_path, str(tmp_path / "gone" / "hermes")))
    with pytest.raises(ServiceError) as refused:
        service.verify(text)
    message = str(refused.value)
    assert message.startswith("systemd-analyze verify rejects it: ")
    assert "gone/hermes is not executable" in message and "\n" not in message
    assert service.verify(render_unit(plan(tmp_path, HERMES))) == "systemd-analyze verify"
    assert not service.path.exists()


def test_the_launchd_plist_runs_the_same_gateway(tmp_path: Path) -> None:
    agent = LaunchAgent(None, tmp_path)
    assert agent.path == tmp_path / "Library" / "LaunchAgents" / "ai.hermes.gateway.plist"
    assert LaunchAgent("work", tmp_path).name == "ai.hermes.gateway.work"
    planned = plan(tmp_path, HERMES)
    text = agent.render(planned)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')
    assert plistlib.loads(text.encode()) == {
        "Label": "ai.hermes.gateway",
        "ProgramArguments": [HERMES, "gateway", "run"],
        "EnvironmentVariables": {
            "HERMES_HOME": str(tmp_path / "home"),
            "HERMES_PROFILE": "default",
            "PATH": "/usr/bin:/bin",
            "HERMES_LOG_STDERR": "0",
            "PYTHONUNBUFFERED": "1",
        },
        "WorkingDirectory": str(tmp_path),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        "ExitTimeOut": 90,
        "StandardOutPath": str(tmp_path / "home" / "logs" / "gateway-output.log"),
        "StandardErrorPath": str(tmp_path / "home" / "logs" / "gateway-output.log"),
    }
    assert render_plist(planned, agent.name) == text  # the same plan, the same bytes


def test_each_home_has_a_name_of_its_own(tmp_path: Path) -> None:
    user = tmp_path / "me"
    assert service_slug(user / ".hermes", user) is None
    assert service_slug(user / ".hermes" / "profiles" / "work", user) == "work"
    first = service_slug(tmp_path / "a" / "agent", user)
    second = service_slug(tmp_path / "b" / "agent", user)
    assert first and second and first != second
    assert first.startswith("agent-") and first == service_slug(tmp_path / "a" / "agent", user)

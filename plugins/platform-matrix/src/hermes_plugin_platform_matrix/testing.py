"""A real Matrix homeserver for platform tests: Synapse on loopback, and a user's side of it.

Synapse (``matrix-synapse`` from PyPI) is installed into a venv of its own under the
machine's temp folder the first time (about a minute; later runs reuse it), configured with
one plain-HTTP client listener on 127.0.0.1, no federation and test-sized rate limits, and
started in about five seconds. :class:`MatrixUser` is what a person does in a Matrix client,
over the client-server API with the standard library, so a test drives the adapter under
test from the other end of a real server.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_testkit.services import ServiceUnavailable, free_port, unavailable

__all__ = ["MatrixUser", "Synapse", "synapse_server"]

SYNAPSE_VERSION = "1.163.2"
SERVER_NAME = "hermes.test"
_ROOT = Path(tempfile.gettempdir()) / "hermes-test-synapse"
_LIMITS = {"per_second": 10_000, "burst_count": 10_000}
_counter = itertools.count()


def _venv() -> Path:
    """Synapse's own venv (it pins libraries the project must not share)."""
    venv = _ROOT / f"venv-{SYNAPSE_VERSION}"
    python = venv / "bin" / "python"
    if python.exists() and (venv / ".complete").exists():
        return python
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        raise ServiceUnavailable("uv is needed to install matrix-synapse (pip install uv)")
    shutil.rmtree(venv, ignore_errors=True)
    _ROOT.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    steps = (
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            f"matrix-synapse=={SYNAPSE_VERSION}",
        ],
    )
    for step in steps:
        done = subprocess.run(
            step, check=False, capture_output=True, text=True, env=env, timeout=600
        )
        if done.returncode != 0:
            raise ServiceUnavailable(f"could not install matrix-synapse: {done.stderr[-400:]}")
    (venv / ".complete").touch()
    return python


def _configure(python: Path, base: Path, port: int) -> Path:
    import yaml

    config = base / "homeserver.yaml"
    subprocess.run(
        [
            str(python), "-m", "synapse.app.homeserver", "--server-name", SERVER_NAME,
            "--config-path", str(config), "--generate-config", "--report-stats=no",
        ],
        cwd=base, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    settings = yaml.safe_load(config.read_text())
    settings.update(
        listeners=[
            {
                "port": port,
                "type": "http",
                "tls": False,
                "bind_addresses": ["127.0.0.1"],
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        trusted_key_servers=[],
        suppress_key_server_warning=True,
        enable_registration=False,
        presence={"enabled": False},
        rc_message=_LIMITS,
        rc_registration=_LIMITS,
        rc_joins={"local": _LIMITS, "remote": _LIMITS},
        rc_invites={"per_room": _LIMITS, "per_user": _LIMITS, "per_issuer": _LIMITS},
        rc_login={"address": _LIMITS, "account": _LIMITS, "failed_attempts": _LIMITS},
        rc_3pid_validation=_LIMITS,
        rc_room_creation=_LIMITS,
    )
    config.write_text(yaml.safe_dump(settings))
    return config


@dataclass
class Synapse:
    url: str
    server_name: str
    shared_secret: str
    log: Path

    def request(
        self, method: str, path: str, body: Mapping[str, Any] | None = None, token: str = ""
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                result: dict[str, Any] = json.loads(response.read() or b"{}")
                return result
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from None

    def register(self, name: str | None = None, password: str = "pw-secret") -> MatrixUser:
        """A new user (a fresh name unless given); returns them logged in."""
        local = name or f"user{os.getpid()}x{next(_counter)}"
        nonce = self.request("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), local.encode(), password.encode(), b"notadmin"]))
        self.request(
            "POST",
            "/_synapse/admin/v1/register",
            {"nonce": nonce, "username": local, "password": password, "mac": mac.hexdigest()},
        )
        login = self.login(local, password)
        return MatrixUser(self, login["user_id"], login["access_token"], password)

    def login(self, local: str, password: str, device_id: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": local},
            "password": password,
        }
        if device_id:
            body["device_id"] = device_id
        return self.request("POST", "/_matrix/client/v3/login", body)


@dataclass
class MatrixUser:
    """A person with a Matrix client: creates rooms, writes, reads what others wrote."""

    server: Synapse
    user_id: str
    token: str
    password: str
    _txn: Iterator[int] = field(default_factory=itertools.count)

    @property
    def localpart(self) -> str:
        return self.user_id[1:].split(":", 1)[0]

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        return self.server.request(method, path, body, self.token)

    def create_room(
        self, invite: list[str], *, direct: bool = True, encrypted: bool = False
    ) -> str:
        body: dict[str, Any] = {
            "invite": invite,
            "is_direct": direct,
            "preset": "trusted_private_chat" if direct else "private_chat",
        }
        if encrypted:
            body["initial_state"] = [
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            ]
        room: str = self.call("POST", "/_matrix/client/v3/createRoom", body)["room_id"]
        return room

    def invite(self, room_id: str, user_id: str) -> None:
        self.call("POST", f"/_matrix/client/v3/rooms/{_q(room_id)}/invite", {"user_id": user_id})

    def join(self, room_id: str) -> None:
        self.call("POST", f"/_matrix/client/v3/join/{_q(room_id)}", {})

    def joined_members(self, room_id: str) -> set[str]:
        members = self.call("GET", f"/_matrix/client/v3/rooms/{_q(room_id)}/joined_members")
        return set(members["joined"])

    def send(self, room_id: str, content: Mapping[str, Any], kind: str = "m.room.message") -> str:
        path = (
            f"/_matrix/client/v3/rooms/{_q(room_id)}/send/{kind}/t{time.time_ns()}{next(self._txn)}"
        )
        event: str = self.call("PUT", path, content)["event_id"]
        return event

    def say(
        self,
        room_id: str,
        text: str,
        *,
        thread: str | None = None,
        reply_to: str | None = None,
        mentions: list[str] | None = None,
    ) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if thread is not None:
            content["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread}
        elif reply_to is not None:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        if mentions is not None:
            content["m.mentions"] = {"user_ids": mentions}
        return self.send(room_id, content)

    def upload(self, data: bytes, name: str, mime: str) -> str:
        """Upload to the homeserver's media repository (``POST /_matrix/media/v3/upload``);
        returns the ``mxc://`` URI."""
        path = f"/_matrix/media/v3/upload?filename={urllib.parse.quote(name)}"
        request = urllib.request.Request(self.server.url + path, data=data, method="POST")
        request.add_header("Content-Type", mime)
        request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            uri: str = json.loads(response.read())["content_uri"]
        return uri

    def send_file(self, room_id: str, data: bytes, name: str, mime: str) -> str:
        """Send a file as a client does: uploaded, then an ``m.image`` / ``m.audio`` /
        ``m.video`` / ``m.file`` event whose ``body`` is its name."""
        top = mime.partition("/")[0]
        msgtype = f"m.{top}" if top in ("image", "audio", "video") else "m.file"
        content = {
            "msgtype": msgtype,
            "body": name,
            "filename": name,
            "url": self.upload(data, name, mime),
            "info": {"mimetype": mime, "size": len(data)},
        }
        return self.send(room_id, content)

    def download(self, uri: str) -> bytes:
        """A file of the media repository (``mxc://server/id``), as this user's client
        downloads it (authenticated media)."""
        server_name, _, media_id = uri.removeprefix("mxc://").partition("/")
        path = f"/_matrix/client/v1/media/download/{server_name}/{media_id}"
        request = urllib.request.Request(self.server.url + path)
        request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
        return data

    def events(self, room_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """The room's message events, oldest first."""
        query = urllib.parse.urlencode(
            {"dir": "b", "limit": limit, "filter": json.dumps({"types": ["m.room.message"]})}
        )
        chunk = self.call("GET", f"/_matrix/client/v3/rooms/{_q(room_id)}/messages?{query}")
        return list(reversed(chunk["chunk"]))

    def seen(self, room_id: str, sender: str) -> list[dict[str, Any]]:
        """``sender``'s messages as a client shows them: edits applied, edit events hidden.
        Each is its content (with ``event_id``)."""
        shown: dict[str, dict[str, Any]] = {}
        for event in self.events(room_id):
            if event.get("sender") != sender:
                continue
            content = dict(event.get("content") or {})
            relation = content.get("m.relates_to") or {}
            if relation.get("rel_type") == "m.replace":
                target = shown.get(str(relation.get("event_id")))
                if target is not None:
                    target.update(content.get("m.new_content") or {})
                continue
            content["event_id"] = event["event_id"]
            shown[event["event_id"]] = content
        return list(shown.values())

    def typing_seen(self, room_id: str) -> set[str]:
        """Who is typing in the room now (from a sync's ephemeral events)."""
        sync = self.call("GET", "/_matrix/client/v3/sync?timeout=0")
        room = (sync.get("rooms", {}).get("join", {}) or {}).get(room_id) or {}
        typing: set[str] = set()
        for event in (room.get("ephemeral") or {}).get("events", []):
            if event.get("type") == "m.typing":
                typing.update(event["content"].get("user_ids", []))
        return typing


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


@contextlib.contextmanager
def synapse_server() -> Iterator[Synapse]:
    """A private Synapse on 127.0.0.1 (SQLite, no federation), stopped afterwards."""
    python = _venv()
    with tempfile.TemporaryDirectory(prefix="hermes-synapse-") as folder:
        base = Path(folder)
        port = free_port()
        config = _configure(python, base, port)
        log = base / "synapse.out"
        with open(log, "ab") as output:
            process = subprocess.Popen(
                [str(python), "-m", "synapse.app.homeserver", "--config-path", str(config)],
                cwd=base,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                with (
                    contextlib.suppress(OSError),
                    urllib.request.urlopen(f"{url}/_matrix/client/versions", timeout=2),
                ):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-600:]
                    raise ServiceUnavailable(f"Synapse did not start: {tail}")
                time.sleep(0.1)
            import yaml

            secret = yaml.safe_load(config.read_text())["registration_shared_secret"]
            yield Synapse(url, SERVER_NAME, secret, log)
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def synapse() -> Iterator[Synapse]:
    """A real Matrix homeserver (Synapse) on 127.0.0.1; ``synapse.register()`` makes a user."""
    try:
        with synapse_server() as server:
            yield server
    except ServiceUnavailable as exc:
        unavailable("a Synapse homeserver", exc)

"""A real Matrix homeserver for platform tests: Synapse on loopback, and a user's side of it.

Synapse (``matrix-synapse`` from PyPI) is installed into a venv of its own under the
machine's temp folder the first time (about a minute; later runs reuse it), configured with
one plain-HTTP client listener on 127.0.0.1, no federation and test-sized rate limits, and
started in about five seconds. :class:`MatrixUser` is what a person does in a Matrix client,
over the client-server API with the standard library, so a test drives the adapter under
test from the other end of a real server. :class:`EncryptingDevice` is one of that person's
devices in an encrypted room: mautrix's client with its own Olm machine, as Element would
be, publishing its keys and (unless told not to) cross-signed by its owner.
"""

from __future__ import annotations

import asyncio
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
import threading
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

__all__ = ["EncryptingDevice", "MatrixUser", "Synapse", "synapse_server"]

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
        return _shown(self.events(room_id), sender)

    def published_keys(self, user_id: str) -> set[str]:
        """The devices of ``user_id`` whose encryption keys the homeserver has."""
        answer = self.call("POST", "/_matrix/client/v3/keys/query", {"device_keys": {user_id: []}})
        return set((answer.get("device_keys") or {}).get(user_id) or {})

    def raw_events(self, room_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """Every event of the room as the homeserver stores it, oldest first."""
        query = urllib.parse.urlencode({"dir": "b", "limit": limit})
        chunk = self.call("GET", f"/_matrix/client/v3/rooms/{_q(room_id)}/messages?{query}")
        return list(reversed(chunk["chunk"]))

    def new_device(self, *, cross_signed: bool = True) -> EncryptingDevice:
        """A new login of this person, as a client that encrypts; ``cross_signed`` signs it
        with the person's cross-signing (made by the first such device)."""
        login = self.server.login(self.localpart, self.password)
        return EncryptingDevice(
            self.server, self.user_id, login["access_token"], login["device_id"], cross_signed
        )

    def typing_seen(self, room_id: str) -> set[str]:
        """Who is typing in the room now (from a sync's ephemeral events)."""
        sync = self.call("GET", "/_matrix/client/v3/sync?timeout=0")
        room = (sync.get("rooms", {}).get("join", {}) or {}).get(room_id) or {}
        typing: set[str] = set()
        for event in (room.get("ephemeral") or {}).get("events", []):
            if event.get("type") == "m.typing":
                typing.update(event["content"].get("user_ids", []))
        return typing


class EncryptingDevice:
    """One of a person's devices in encrypted rooms: mautrix's client and Olm machine on an
    event loop of its own thread, syncing all the time (room keys reach it as they would a
    phone), writing encrypted messages and reading the ones it can decrypt."""

    def __init__(
        self, server: Synapse, user_id: str, token: str, device_id: str, cross_signed: bool
    ) -> None:
        self.server = server
        self.user_id = user_id
        self.device_id = device_id
        self.received: list[dict[str, Any]] = []
        """Every message this device decrypted: the event, with ``trust`` (its sender
        device's trust as mautrix resolves it)."""
        self.unreadable: list[str] = []
        """Event ids this device could not decrypt (no key for it)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._run(self._open(token, cross_signed))

    def _run(self, coroutine: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _open(self, token: str, cross_signed: bool) -> None:
        from mautrix.client import Client
        from mautrix.client.encryption_manager import DecryptionDispatcher
        from mautrix.crypto import OlmMachine, PgCryptoStore
        from mautrix.types import EventType
        from mautrix.util.async_db import Database

        from hermes_plugin_platform_matrix.encryption import new_state_store

        client: Any = Client(
            mxid=self.user_id,
            device_id=self.device_id,
            base_url=self.server.url,
            token=token,
            state_store=new_state_store(),
        )
        # mautrix's memory store cannot keep a changed cross-signing key; its SQL one can.
        self._folder = tempfile.TemporaryDirectory(prefix="hermes-matrix-device-")
        self._database = Database.create(
            f"sqlite:{self._folder.name}/crypto.db", upgrade_table=PgCryptoStore.upgrade_table
        )
        await self._database.start()
        store: Any = PgCryptoStore(self.user_id, "test", self._database)
        await store.open()
        machine = OlmMachine(client, store, client.state_store)
        await machine.load()
        await store.put_device_id(self.device_id)
        client.crypto = machine
        client.remove_dispatcher(DecryptionDispatcher)
        await machine.share_keys()
        if cross_signed:
            if await machine.get_own_cross_signing_public_keys() is None:
                self.recovery_key = await machine.generate_recovery_key()
            else:
                raise AssertionError("make the person's first device the cross-signed one")
        client.add_event_handler(EventType.ROOM_ENCRYPTED, self._encrypted)
        self.client: Any = client
        self.machine: Any = machine
        client.start(None)

    async def _encrypted(self, event: Any) -> None:
        from mautrix.errors import SessionNotFound

        try:
            try:
                plain = await self.machine.decrypt_megolm_event(event)
            except SessionNotFound:
                await self.machine.wait_for_session(event.room_id, event.content.session_id, 10)
                plain = await self.machine.decrypt_megolm_event(event)
        except Exception:  # noqa: BLE001 - what the test asserts is which it could not read
            self.unreadable.append(str(event.event_id))
            return
        record = plain.serialize()
        record["trust"] = str(plain.get("mautrix", {}).get("trust_state"))
        record.pop("mautrix", None)
        self.received.append(record)

    def say(self, room_id: str, text: str, *, mentions: list[str] | None = None) -> str:
        """An encrypted ``m.text`` message (the room's key shared with its members' devices
        first, as a client does)."""
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if mentions is not None:
            content["m.mentions"] = {"user_ids": mentions}
        return self.send(room_id, content)

    def send(self, room_id: str, content: Mapping[str, Any]) -> str:
        from mautrix.types import EventType

        async def send() -> str:
            return str(
                await self.client.send_message_event(room_id, EventType.ROOM_MESSAGE, dict(content))
            )

        event_id: str = self._run(send())
        return event_id

    def send_file(self, room_id: str, data: bytes, name: str, mime: str) -> str:
        """A file as Element sends it into an encrypted room: encrypted, uploaded as
        ciphertext, its key in the (encrypted) event's ``file``."""
        from mautrix.crypto.attachments import encrypt_attachment
        from mautrix.types import EventType

        async def send() -> str:
            ciphertext, secret = encrypt_attachment(data)
            uri = await self.client.upload_media(
                ciphertext, mime_type="application/octet-stream", filename=name
            )
            top = mime.partition("/")[0]
            content = {
                "msgtype": f"m.{top}" if top in ("image", "audio", "video") else "m.file",
                "body": name,
                "filename": name,
                "file": {**secret.serialize(), "url": str(uri)},
                "info": {"mimetype": mime, "size": len(data)},
            }
            return str(
                await self.client.send_message_event(room_id, EventType.ROOM_MESSAGE, content)
            )

        event_id: str = self._run(send())
        return event_id

    def download(self, secret: Mapping[str, Any]) -> bytes:
        """A file of an encrypted room (its event's ``file``), downloaded and decrypted."""
        from mautrix.crypto.attachments import decrypt_attachment

        async def fetch() -> bytes:
            data = await self.client.download_media(secret["url"])
            return bytes(
                decrypt_attachment(
                    data, secret["key"]["k"], secret["hashes"]["sha256"], secret["iv"]
                )
            )

        data: bytes = self._run(fetch())
        return data

    def seen(self, room_id: str, sender: str) -> list[dict[str, Any]]:
        """``sender``'s messages this device decrypted in the room, as it shows them (edits
        applied, edit events hidden); each content has ``event_id`` and ``trust``."""
        events = [
            dict(e, content=dict(e["content"], trust=e["trust"]))
            for e in list(self.received)
            if e.get("room_id") == room_id
        ]
        return _shown(events, sender)

    def close(self) -> None:
        async def stop() -> None:
            self.client.stop()
            await self.client.api.session.close()
            await self._database.stop()

        with contextlib.suppress(Exception):
            self._run(stop(), timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._folder.cleanup()


def _shown(events: list[dict[str, Any]], sender: str) -> list[dict[str, Any]]:
    shown: dict[str, dict[str, Any]] = {}
    for event in events:
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

"""End-to-end encryption for the Matrix adapter, with mautrix's Olm machine (python-olm).

The bot is a device of its own: its identity and one-time keys are published on start, the
room keys other devices send it are kept in ``HERMES_HOME/platforms/matrix/crypto.db``
(SQLite, each secret pickled under a key kept apart in ``.env.crypto`` there, which backups
leave out as they leave out every ``.env``), and its answers in an encrypted room are Megolm
messages whose keys go only to the devices the trust setting admits. When the account has
no cross-signing yet, the bot makes it and signs its own device, so clients show its
messages as sent by a device its owner verified.

Trust (``platforms.matrix.trust``): ``cross-signed`` (the default) acts only on messages from
devices their owner cross-signed, the owner's identity trusted on first use as Element does,
and gives room keys only to such devices; ``any`` reads and answers every device.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text

__all__ = [
    "Decrypted",
    "EncryptionUnavailable",
    "RoomEncryption",
    "encryption_available",
]

log = logging.getLogger("hermes.matrix")

KEY_WAIT_SECONDS = 20.0
"""How long a message whose room key has not come yet waits for it (asked of the sender's
devices after a moment) before its sender is told it could not be read."""
_SECRETS = ".env.crypto"
_NEW_DEVICE = (
    "delete crypto.db there and start Hermes as a new device: with MATRIX_PASSWORD, delete "
    "device.json there too; with MATRIX_ACCESS_TOKEN, make a new token (a new login)"
)


class EncryptionUnavailable(Exception):
    """Encrypted rooms cannot be served here: the line says what to install or change."""


def encryption_available() -> str:
    """'' when mautrix's crypto can load, else the line that says what to install."""
    try:
        import olm  # noqa: F401
        from mautrix.crypto import OlmMachine  # noqa: F401
    except ImportError as exc:
        return (
            f"encrypted rooms need python-olm ({exc}); it has prebuilt wheels for Python "
            "3.11 and 3.12; on another Python install libolm-dev and cmake, then "
            "`pip install python-olm`"
        )
    return ""


@dataclass(frozen=True, slots=True)
class Decrypted:
    """A room event read out of its ``m.room.encrypted`` envelope."""

    event: dict[str, Any]
    """The plaintext event, as the server would have sent it unencrypted."""
    device: str
    """The sender's device, for the line that names it."""
    trusted: bool
    """Sent by a device the trust setting admits."""


def new_state_store() -> Any:
    """A room-state store the Olm machine and mautrix's client both use (its classes are
    made here: mautrix is imported only once the platform runs)."""
    from mautrix.client.state_store.memory import MemoryStateStore
    from mautrix.crypto import StateStore as CryptoStateStore
    from mautrix.types import Membership

    class RoomStates(MemoryStateStore, CryptoStateStore):  # type: ignore[misc]
        """mautrix's in-memory room state, with the rooms a user shares with the bot (which
        the Olm machine asks when that user's devices change)."""

        async def find_shared_rooms(self, user_id: Any) -> Any:
            return [
                room
                for room, members in self.members.items()
                if self.encryption.get(room) is not None
                and (member := members.get(user_id)) is not None
                and member.membership in (Membership.JOIN, Membership.INVITE)
            ]

    return RoomStates()


class RoomEncryption:
    """The bot's device: keys published, to-device messages absorbed, events decrypted."""

    def __init__(self, client: Any, machine: Any, database: Any, folder: Path, trust: str) -> None:
        self.client = client
        self.folder = folder
        self.machine = machine
        self.database = database
        self.trust = trust
        self._waiting: set[asyncio.Task[None]] = set()

    # --- opening -------------------------------------------------------------------------

    @classmethod
    async def open(cls, client: Any, folder: Path, trust: str, password: str) -> RoomEncryption:
        """The device of ``client`` (its mxid and device_id set), its keys loaded from
        ``folder`` or made and published."""
        from mautrix.crypto import OlmMachine, PgCryptoStore
        from mautrix.util.async_db import Database

        if not client.device_id:
            raise EncryptionUnavailable(
                "the homeserver did not say which device MATRIX_ACCESS_TOKEN belongs to, so "
                "its encryption keys cannot be published; log in with MATRIX_PASSWORD instead"
            )
        folder.mkdir(parents=True, exist_ok=True)
        pickle_key = _pickle_key(folder)
        database = Database.create(
            f"sqlite:{folder / 'crypto.db'}",
            upgrade_table=PgCryptoStore.upgrade_table,
            log=logging.getLogger("hermes.matrix.crypto"),
        )
        await database.start()
        store = PgCryptoStore(str(client.mxid), pickle_key, database)
        try:
            await store.open()
            saved_device = await store.get_device_id()
            if saved_device and saved_device != client.device_id:
                log.info(
                    "matrix: this login is device %s, not %s whose keys are stored; making "
                    "new keys",
                    client.device_id,
                    saved_device,
                )
                await store.delete()
            machine = OlmMachine(client, store, client.state_store)
            try:
                await machine.load()
            except Exception as exc:  # noqa: BLE001 - olm's pickle errors share no class
                raise EncryptionUnavailable(
                    f"the encryption keys in {folder / 'crypto.db'} cannot be opened with the "
                    f"key in {folder / _SECRETS} ({exc}); if that file was lost, {_NEW_DEVICE}"
                ) from None
            # Always: after a delete the store still holds the old device's id.
            await store.put_device_id(client.device_id)
            # Room keys this device sent are made again after a restart: the members they
            # were shared with may have changed while it was down, unseen.
            await database.execute(
                "DELETE FROM crypto_megolm_outbound_session WHERE account_id=$1", str(client.mxid)
            )
            device = cls(client, machine, database, folder, trust)
            await device._publish(password)
            client.crypto = machine  # only now: a device that failed to publish sends nothing
            _decrypt_ourselves(client)
            return device
        except BaseException:
            await database.stop()
            raise

    async def _publish(self, password: str) -> None:
        from mautrix.errors import MatrixRequestError

        machine = self.machine
        machine.send_keys_min_trust = self._min_trust()
        machine.share_keys_min_trust = self._min_trust()
        try:
            await machine.share_keys()
        except MatrixRequestError as exc:
            if exc.http_status != 400:  # the server busy or down: the platform retries
                raise RuntimeError(f"could not publish this device's keys: {exc}") from None
            raise EncryptionUnavailable(
                f"the homeserver refused this device's encryption keys ({exc}): another client "
                f"already published keys for this device; {_NEW_DEVICE}"
            ) from None
        await self._cross_sign(password)
        account = machine.account
        log.info(
            "matrix: encryption on: device %s, fingerprint %s",
            self.client.device_id,
            _fingerprint(account.signing_key),
        )

    async def _cross_sign(self, password: str) -> None:
        """Make the account's cross-signing and sign this device with it, once; on a new
        device, sign it with the recovery key kept beside the keys. Never fatal: an
        unsigned device still reads and answers, its messages shown as unverified."""
        machine = self.machine
        folder = self.folder
        recovery = _read_secrets(folder).get("MATRIX_RECOVERY_KEY", "")
        try:
            if await machine.get_own_cross_signing_public_keys() is None:
                recovery = await self._make_cross_signing(password)
                _write_secret(folder, "MATRIX_RECOVERY_KEY", recovery)
                log.info("matrix: made this account's cross-signing and signed this device")
            elif recovery:
                await machine.verify_with_recovery_key(recovery)
            else:
                log.info(
                    "matrix: the account has cross-signing this Hermes has no key for; its "
                    "device stays unverified (verify it from one of the account's sessions)"
                )
        except Exception as exc:  # noqa: BLE001 - see above
            log.warning(
                "matrix: could not cross-sign this device (%s); it stays unverified",
                str(exc).splitlines()[0][:200],
            )

    async def _make_cross_signing(self, password: str) -> str:
        """The account's cross-signing keys published (with the password when the server
        asks for it), then kept in its secret storage under a new recovery key, which is
        returned. In that order: a refused upload leaves the account's storage as it was."""
        from mautrix.crypto.cross_signing_key import CrossSigningSeeds
        from mautrix.errors import MatrixRequestError

        machine = self.machine
        seeds = CrossSigningSeeds.generate()
        try:
            # mautrix's own step of generate_recovery_key, which cannot pass the password.
            await machine._publish_cross_signing_keys(seeds.to_keys())
        except MatrixRequestError as exc:
            if exc.http_status != 401 or not password:
                raise
            session = None  # the interactive-auth session of the 401, when it has one
            with contextlib.suppress(ValueError, AttributeError):
                session = json.loads(getattr(exc, "text", "") or "{}").get("session")
            auth = {
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": str(self.client.mxid)},
                "password": password,
                **({"session": session} if session else {}),
            }
            await machine._publish_cross_signing_keys(seeds.to_keys(), auth=auth)
        ssss_key = await machine.ssss.generate_and_upload_key()
        await machine._upload_cross_signing_keys_to_ssss(ssss_key, seeds)
        await machine.ssss.set_default_key_id(ssss_key.id)
        await machine.sign_own_device(machine.own_identity)
        return str(ssss_key.recovery_key)

    def _min_trust(self) -> Any:
        from mautrix.types import TrustState

        return TrustState.UNVERIFIED if self.trust == "any" else TrustState.CROSS_SIGNED_TOFU

    # --- each sync -----------------------------------------------------------------------

    async def absorb(self, data: Mapping[str, Any]) -> None:
        """What a sync says about keys and rooms, taken in before its room events are read:
        the room keys sent to this device, changed device lists, one-time keys used up,
        encryption and membership of rooms (a member's change starts a new room key)."""
        from mautrix.types import DeviceLists, DeviceOTKCount, EventType, ToDeviceEvent

        machine = self.machine
        for room_id, room in ((data.get("rooms") or {}).get("join") or {}).items():
            timeline = (room.get("timeline") or {}).get("events") or ()
            await self.absorb_state(
                room_id, [*((room.get("state") or {}).get("events") or ()), *timeline]
            )
        for raw in (data.get("to_device") or {}).get("events") or ():
            with _logged("a to-device message"):
                message = ToDeviceEvent.deserialize(raw)
                if message.type == EventType.TO_DEVICE_ENCRYPTED:
                    await machine.handle_to_device_event(message)
                elif message.type == EventType.ROOM_KEY_REQUEST:
                    await machine.handle_room_key_request(message)
                elif str(message.type).startswith("m.key.verification."):
                    log.info(
                        "matrix: %s asked to verify this device interactively, which Hermes "
                        "does not do; its device is signed by its account's cross-signing",
                        message.sender,
                    )
        lists = data.get("device_lists") or {}
        if lists.get("changed") or lists.get("left"):
            with _logged("changed device lists"):
                await machine.handle_device_lists(
                    DeviceLists(changed=lists.get("changed") or [], left=lists.get("left") or [])
                )
        counts = data.get("device_one_time_keys_count")
        if not isinstance(counts, Mapping):
            return  # not said in this sync: asking would upload keys or query every time
        with _logged("the one-time key count"):
            await machine.handle_otk_count(
                DeviceOTKCount(
                    curve25519=int(counts.get("curve25519") or 0),
                    signed_curve25519=int(counts.get("signed_curve25519") or 0),
                )
            )

    async def absorb_state(self, room_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        """A room's state events (from a sync, or a gap fetched back): encryption and
        membership, a member's change starting a new room key."""
        from mautrix.types import EventType, StateEvent

        for raw in events:
            if "state_key" not in raw:
                continue
            with _logged("a room's state"):
                state: Any = {**raw, "room_id": room_id}
                event = StateEvent.deserialize(state)
                await self.client.state_store.update_state(event)
                if event.type == EventType.ROOM_MEMBER:
                    await self.machine.handle_member_event(event)

    async def decrypt(self, room_id: str, raw: Mapping[str, Any], wait: float = 0) -> Decrypted:
        """The event inside ``raw``; waits up to ``wait`` seconds for a room key not yet
        here (asking the sender's device for it after a moment). Raises mautrix's
        DecryptionError (SessionNotFound when the key never came), or SerializerError for
        an envelope that is not one."""
        from mautrix.errors import SessionNotFound
        from mautrix.types import EncryptedEvent, TrustState

        envelope: Any = {**raw, "room_id": room_id}
        event = EncryptedEvent.deserialize(envelope)
        try:
            decrypted = await self.machine.decrypt_megolm_event(event)
        except SessionNotFound:
            if wait <= 0:
                raise
            content = event.content
            machine = self.machine
            if not await machine.wait_for_session(room_id, content.session_id, min(3, wait)):
                if content.device_id:  # asked once; the answer wakes the wait below
                    await machine.request_room_key(
                        room_id,
                        content.sender_key,
                        content.session_id,
                        {event.sender: [content.device_id]},
                        timeout=0,
                    )
                await machine.wait_for_session(room_id, content.session_id, max(wait - 3, 0.1))
            decrypted = await machine.decrypt_megolm_event(event)
        plain = decrypted.serialize()
        plain.pop("mautrix", None)
        trust = decrypted.get("mautrix", {}).get("trust_state", TrustState.UNVERIFIED)
        device = None  # named by its key, not by the device id its sender's client claims
        if getattr(event.content, "sender_key", None):
            with contextlib.suppress(Exception):
                device = await self.machine.get_or_fetch_device_by_key(
                    event.sender, event.content.sender_key
                )
        return Decrypted(
            event=plain,
            device=str(device.device_id) if device is not None else "a session I do not know",
            trusted=trust >= self._min_trust()
            or (self.trust == "any" and trust != TrustState.BLACKLISTED),
        )

    def keep(self, task: asyncio.Task[None]) -> None:
        """Hold a message waiting for its key until it is done (what it raised, logged)."""
        self._waiting.add(task)
        task.add_done_callback(self._done_waiting)

    def _done_waiting(self, task: asyncio.Task[None]) -> None:
        self._waiting.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("matrix: a message waiting for its key failed: %s", task.exception())

    async def aclose(self) -> None:
        for task in list(self._waiting):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.database.stop()


def _decrypt_ourselves(client: Any) -> None:
    """mautrix's client decrypts in its own dispatcher when it syncs; the adapter syncs and
    decrypts itself, in order, so that dispatcher is taken off."""
    from mautrix.client.encryption_manager import DecryptionDispatcher

    with contextlib.suppress(Exception):
        client.remove_dispatcher(DecryptionDispatcher)


@contextlib.contextmanager
def _logged(what: str) -> Any:
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - one bad key message never stops the sync
        log.warning("matrix: could not take in %s: %s", what, str(exc).splitlines()[0][:200])


def _fingerprint(signing_key: str) -> str:
    """The device's ed25519 key, grouped in fours as Element shows a session key."""
    return " ".join(signing_key[i : i + 4] for i in range(0, len(signing_key), 4))


def _read_secrets(folder: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    with contextlib.suppress(FileNotFoundError):
        for line in (folder / _SECRETS).read_text().splitlines():
            name, sep, value = line.partition("=")
            if sep and name.strip():
                values[name.strip()] = value.strip()
    return values


def _write_secret(folder: Path, name: str, value: str) -> None:
    values = _read_secrets(folder)
    values[name] = value
    text = "".join(f"{key}={item}\n" for key, item in values.items())
    atomic_write_text(folder / _SECRETS, text, mode=0o600)


def _pickle_key(folder: Path) -> str:
    key = _read_secrets(folder).get("MATRIX_PICKLE_KEY", "")
    if not key:
        if (folder / "crypto.db").exists():
            raise EncryptionUnavailable(
                f"{folder / 'crypto.db'} holds encryption keys but {folder / _SECRETS}, the key "
                f"that opens them, is gone (a backup leaves it out); restore it, or {_NEW_DEVICE}"
            )
        key = secrets.token_urlsafe(32)
        _write_secret(folder, "MATRIX_PICKLE_KEY", key)
    return key

"""``platforms.whatsapp_bridge``: where hermes-agent's WhatsApp bridge listens, where it
writes the files people send, and how groups are answered; checked before anything
connects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from hermes_commons.wake_words import compile_wake_words
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["BridgeSettings"]

DEFAULT_URL = "http://127.0.0.1:3000"


def _default_media_dirs() -> tuple[Path, ...]:
    """Where the bridge writes received files: its own defaults (``~/.hermes/image_cache``
    and kin, when started by hand) and what hermes-agent's gateway gave it
    (``~/.hermes/cache/images`` and kin)."""
    hermes = Path.home() / ".hermes"
    own = ("image_cache", "audio_cache", "document_cache")
    given = ("cache/images", "cache/audio", "cache/documents")
    return tuple(hermes / name for name in own + given)


def _default_session() -> Path:
    """Where hermes-agent keeps the bridge's session: ``~/.hermes/whatsapp/session`` when
    that has one (older installs), else ``~/.hermes/platforms/whatsapp/session``."""
    hermes = Path.home() / ".hermes"
    older = hermes / "whatsapp" / "session"
    if older.is_dir() and any(older.iterdir()):
        return older
    return hermes / "platforms" / "whatsapp" / "session"


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    bridge_url: str
    """The bridge (``node bridge.js --port 3000``): on this machine, it has no password."""
    session: Path
    """The bridge's session folder (``--session``): its ``lid-mapping-*.json`` files tell
    a person's number behind their WhatsApp id."""
    media_dirs: tuple[Path, ...]
    """Folders the bridge writes received files to; a file elsewhere is not read."""
    groups: bool
    """Answer in groups at all (hermes-agent ignored them unless told otherwise)."""
    require_mention: bool
    mentions: tuple[re.Pattern[str], ...]
    """Wake words besides a mention (none by default: WhatsApp has mentions)."""
    poll_seconds: float

    @classmethod
    def from_context(cls, context: PlatformContext) -> BridgeSettings:
        config = context.config
        url = str(config.get("bridge_url") or "").strip().rstrip("/")
        if not url and config.get("bridge_port") is not None:  # hermes-agent's setting
            url = f"http://127.0.0.1:{config.get('bridge_port')}"
        url = url or DEFAULT_URL
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            parts = urlsplit("")
        if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise PlatformNotConfigured(
                "platforms.whatsapp_bridge.bridge_url is the bridge on this machine, as "
                f"http://127.0.0.1:3000 (it has no password and takes loopback only), not {url!r}"
            )
        given = config.get("session_path")
        session = Path(str(given)).expanduser() if given else _default_session()
        raw_dirs = config.get("media_dirs")
        if raw_dirs is None:
            media_dirs = _default_media_dirs()
        elif isinstance(raw_dirs, list) and all(isinstance(d, str) for d in raw_dirs):
            media_dirs = tuple(Path(d).expanduser() for d in raw_dirs)
        else:
            raise PlatformNotConfigured(
                "platforms.whatsapp_bridge.media_dirs is a list of folders (where the bridge "
                f"writes received files: its HERMES_IMAGE_CACHE_DIR and kin), not {raw_dirs!r}"
            )
        poll = config.get("poll_seconds", 1.0)
        if isinstance(poll, bool) or not isinstance(poll, int | float) or not 0.2 <= poll <= 60:
            raise PlatformNotConfigured(
                f"platforms.whatsapp_bridge.poll_seconds is from 0.2 to 60, not {poll!r}"
            )
        return cls(
            bridge_url=url,
            session=session,
            media_dirs=media_dirs,
            groups=config.get("groups", True) is not False,
            require_mention=config.get("require_mention", True) is not False,
            mentions=compile_wake_words(
                config.get("mention_patterns", []), "platforms.whatsapp_bridge.mention_patterns"
            ),
            poll_seconds=float(poll),
        )

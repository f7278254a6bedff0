"""Setting up encryption: what a bad setting says, and what a lost key file does (a backup
restored without its secrets)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

import pytest
from hermes_plugin_platform_matrix.adapter import MatrixAdapter
from hermes_plugin_platform_matrix.testing import Synapse

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost


def context(home: Path, url: str, token: str, **config: object) -> PlatformContext:
    return PlatformContext(
        name="matrix",
        home=str(home),
        config={"homeserver": url, **config},
        secrets={"MATRIX_ACCESS_TOKEN": token},
    )


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"trust": "verified-ish"}, "platforms.matrix.trust must be one of cross-signed, any"),
        ({"encryption": "yes"}, "platforms.matrix.encryption must be true or false"),
    ],
)
def test_a_bad_encryption_setting_says_what_to_fix(
    tmp_path: Path, config: dict[str, object], says: str
) -> None:
    with pytest.raises(PlatformNotConfigured, match=says):
        MatrixAdapter(context(tmp_path, "http://127.0.0.1:1", "syt_x", **config))


def _run_until(adapter: MatrixAdapter, condition: object, timeout: float = 30) -> None:
    async def main() -> None:
        host = RecordingHost()
        task = asyncio.ensure_future(adapter.run(host))
        try:
            deadline = time.monotonic() + timeout
            while not condition():  # type: ignore[operator]
                assert not task.done(), task.exception()
                assert time.monotonic() < deadline, "the adapter did not get there in time"
                await asyncio.sleep(0.1)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())


def test_keys_whose_key_file_is_lost_say_so_and_plain_rooms_go_on(
    synapse: Synapse, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bot = synapse.register()
    first = MatrixAdapter(context(tmp_path, synapse.url, bot.token))
    _run_until(first, lambda: first.crypto is not None)
    folder = tmp_path / "platforms" / "matrix"
    secrets = (folder / ".env.crypto").read_text()
    assert "MATRIX_PICKLE_KEY=" in secrets and "MATRIX_RECOVERY_KEY=" in secrets
    assert (folder / ".env.crypto").stat().st_mode & 0o777 == 0o600
    assert b"MATRIX_PICKLE_KEY" not in (folder / "crypto.db").read_bytes()

    (folder / ".env.crypto").unlink()  # a backup restored without its secrets
    caplog.set_level(logging.WARNING, "hermes.matrix")
    second = MatrixAdapter(context(tmp_path, synapse.url, bot.token))
    _run_until(second, lambda: second.bot is not None and second._crypto_off != "")
    (line,) = [r.getMessage() for r in caplog.records if "encrypted rooms" in r.getMessage()]
    assert "the key that opens them, is gone" in line
    assert "delete crypto.db there" in line and "MATRIX_ACCESS_TOKEN, make a new token" in line
    assert (folder / "crypto.db").exists(), "the keys are kept for the user to restore"

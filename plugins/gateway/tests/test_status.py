"""One gateway per home: the pid lock (the SDK's FileLock) refuses a second one by pid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hermes_plugin_gateway.status import AlreadyRunning, PidLock, running_pid


def test_a_second_gateway_is_refused_naming_the_first(tmp_path: Path) -> None:
    assert running_pid(tmp_path) is None
    first = PidLock(tmp_path)
    first.acquire()
    try:
        assert running_pid(tmp_path) == os.getpid()
        with pytest.raises(AlreadyRunning, match=rf"already runs .*\(pid {os.getpid()}\)"):
            PidLock(tmp_path).acquire()
    finally:
        first.release()
    assert running_pid(tmp_path) is None
    second = PidLock(tmp_path)
    second.acquire()  # free again once released
    second.release()

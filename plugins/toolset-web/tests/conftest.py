from __future__ import annotations

from collections.abc import Iterator

import pytest

from .loopback_site import Site


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site()
    yield served
    served.close()

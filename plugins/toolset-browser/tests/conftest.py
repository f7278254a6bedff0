from __future__ import annotations

from collections.abc import Iterator

import pytest

from .site import Secret, Site


@pytest.fixture(scope="module")
def secret() -> Iterator[Secret]:
    served = Secret()
    yield served
    served.close()


@pytest.fixture(scope="module")
def site(secret: Secret) -> Iterator[Site]:
    served = Site(secret)
    yield served
    served.close()

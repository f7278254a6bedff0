"""The hubs skills come from. Each source owns a form of identifier, answers searches, and
fetches packages; :func:`sources` builds them from the settings, :func:`owner` finds the one
an identifier belongs to."""

from __future__ import annotations

import abc

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import Listing, Package

__all__ = ["Source", "matches"]


class Source(abc.ABC):
    name: str
    """As a lock entry and ``--source`` name it: github, skills-sh, clawhub, ..."""
    catalog: bool = False
    """Its search lists everything it has, then filters here (and the list is cached), rather
    than asking the hub with the query."""

    @abc.abstractmethod
    def owns(self, identifier: str) -> bool: ...

    @abc.abstractmethod
    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]: ...

    @abc.abstractmethod
    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        """The skills ``identifier`` names: one, or each skill of a repository or folder."""


def matches(query: str, *texts: str) -> bool:
    """Whether every word of ``query`` is in one of ``texts`` (an empty query matches)."""
    haystack = " ".join(texts).lower()
    return all(word in haystack for word in query.lower().split())

"""Loopback stand-ins for the hubs, serving each one's real formats, for this plugin's
tests and yours (``hermes-plugin-skills-hub[testing]``):

- :class:`FakeGitHub`: the REST API's repository, git tree (``recursive=1``) and contents
  endpoints (raw with ``Accept: application/vnd.github.raw``, else JSON with base64), a
  rate limit that says no as GitHub does (403, ``X-RateLimit-Remaining: 0``);
- :class:`FakeClawHub`: ``/api/v1`` search, skills list, a skill's record and the version's
  zip download, and a 429 with ``Retry-After``;
- :class:`FakeSkillsSh`: skills.sh's ``/api/search``;
- :class:`StaticSite`: files at paths, for a well-known index and a plain SKILL.md URL.

Each records the requests it got (method, path and query, headers) in ``requests``.
"""

from hermes_plugin_skills_hub.testing.hubs import (
    FakeClawHub,
    FakeGitHub,
    FakeSkillsSh,
    StaticSite,
    skill_md,
)

__all__ = ["FakeClawHub", "FakeGitHub", "FakeSkillsSh", "StaticSite", "skill_md"]

"""Skill bundles: named sets of skills loaded together (``/bundles NAME`` in a chat,
``hermes skills bundle ...``), one YAML file each in ``HERMES_HOME/skill-bundles/`` as
hermes-agent writes them::

    name: release-day
    description: Everything for cutting a release
    skills: [release-notes, git-workflow, writing-tests]
    instruction: Work through them in order and report each step.

A bundle loaded in a chat reaches the model with the next message: each skill's
instructions, then the bundle's instruction and the user's. Skills the bundle names that are
not installed are skipped and said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_plugin_skills.library import Library

__all__ = ["Bundle", "BundleError", "bundle_dir", "load_bundles", "slug"]

FOLDER = "skill-bundles"
BODY_LIMIT = 40_000


class BundleError(ValueError):
    """A bundle that cannot be read or written; the message says what to fix."""


@dataclass(frozen=True)
class Bundle:
    name: str
    skills: tuple[str, ...]
    description: str = ""
    instruction: str = ""
    path: Path | None = field(default=None, compare=False)

    def as_yaml(self) -> str:
        import yaml

        data: dict[str, Any] = {"name": self.name, "skills": list(self.skills)}
        if self.description:
            data["description"] = self.description
        if self.instruction:
            data["instruction"] = self.instruction
        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def slug(name: str) -> str:
    text = re.sub(r"[\s_]+", "-", name.strip().lower())
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "", text)).strip("-")


def bundle_dir(home: str) -> Path:
    return Path(home) / FOLDER


def _parse(path: Path) -> Bundle:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BundleError(
            f"{path}: cannot be read as YAML ({' '.join(str(exc).split())[:120]})"
        ) from None
    if not isinstance(data, Mapping):
        raise BundleError(f"{path}: must be a mapping with name and skills")
    skills = data.get("skills")
    if isinstance(skills, str):
        skills = [part.strip() for part in skills.split(",")]
    if not isinstance(skills, list) or not skills or not all(isinstance(s, str) for s in skills):
        raise BundleError(f"{path}: skills must be a list of skill names")
    return Bundle(
        name=slug(str(data.get("name") or path.stem)) or path.stem,
        skills=tuple(dict.fromkeys(s.strip() for s in skills if s.strip())),
        description=str(data.get("description") or ""),
        instruction=str(data.get("instruction") or ""),
        path=path,
    )


def load_bundles(home: str) -> tuple[dict[str, Bundle], list[str]]:
    """Every bundle by name (the first file alphabetically wins a name), and one line for
    each file left out."""
    found: dict[str, Bundle] = {}
    problems: list[str] = []
    folder = bundle_dir(home)
    paths = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []
    for path in paths:
        try:
            bundle = _parse(path)
        except BundleError as exc:
            problems.append(str(exc))
            continue
        found.setdefault(bundle.name, bundle)
    return found, problems


def save(home: str, bundle: Bundle, replace: bool) -> Path:
    if not bundle.name:
        raise BundleError("a bundle needs a name of letters, digits or hyphens")
    path = bundle_dir(home) / f"{bundle.name}.yaml"
    if path.exists() and not replace:
        raise BundleError(f"bundle {bundle.name!r} exists ({path}); --force replaces it")
    atomic_write_text(path, bundle.as_yaml())
    return path


def get(home: str, name: str) -> Bundle:
    bundles, _ = load_bundles(home)
    bundle = bundles.get(slug(name))
    if bundle is None:
        known = ", ".join(sorted(bundles)) or "none yet (hermes skills bundle create)"
        raise BundleError(f"no bundle named {name!r}; bundles: {known}")
    return bundle


def invocation(
    bundle: Bundle, library: Library, instruction: str = ""
) -> tuple[str, list[str], list[str]]:
    """The text that loads ``bundle`` for the model, the skills loaded, the ones missing."""
    loaded, missing, blocks = [], [], []
    for name in bundle.skills:
        skill = library.skills.get(name)
        if skill is None:
            missing.append(name)
            continue
        loaded.append(name)
        body = skill.path.read_text(encoding="utf-8")[:BODY_LIMIT]
        blocks.append(f'[Skill "{name}", loaded as part of the bundle "{bundle.name}"]\n{body}')
    head = [
        f'[The user loaded the skill bundle "{bundle.name}": follow these skills together for '
        "the request below.]",
        f"Skills loaded: {', '.join(loaded) or 'none'}",
    ]
    if missing:
        head.append(f"Skills missing (not installed, skipped): {', '.join(missing)}")
    if bundle.instruction:
        head.append(f"Bundle instruction: {bundle.instruction}")
    if instruction:
        head.append(f"User instruction: {instruction}")
    return "\n".join(head) + "\n\n" + "\n\n".join(blocks), loaded, missing

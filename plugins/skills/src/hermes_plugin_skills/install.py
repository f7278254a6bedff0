"""``hermes skills install``: copy skills into a quarantine folder, check and scan them there,
and only then, with the user's yes, move them where the agent will see them."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hermes_commons.scan import Finding, scan_script, scan_text
from hermes_plugin_skills.library import skill_folders
from hermes_plugin_skills.skillfile import Skill, SkillError, load_skill

__all__ = ["Candidate", "InstallError", "fetch", "inspect", "quarantine_root"]

TEXT_SUFFIXES = {".md", ".txt", ".py", ".sh", ".bash", ".js", ".ts", ".json", ".yaml", ".yml"}
MAX_SKILLS = 100


class InstallError(RuntimeError):
    """The install cannot go on; nothing was installed."""


@dataclass
class Candidate:
    folder: Path
    skill: Skill | None = None
    error: str | None = None
    findings: list[tuple[str, Finding]] = field(default_factory=list)


def quarantine_root(skills_root: Path) -> Path:
    return skills_root / ".quarantine"


def is_git_url(source: str) -> bool:
    return source.startswith(("git+", "https://", "http://", "ssh://", "git@", "file://"))


def fetch(source: str, skills_root: Path) -> Path:
    """A fresh quarantine folder holding a copy of ``source`` (a folder, or a git URL with an
    optional @REF); the caller removes it."""
    quarantine = quarantine_root(skills_root)
    quarantine.mkdir(parents=True, exist_ok=True)
    target = Path(tempfile.mkdtemp(prefix="install-", dir=quarantine))
    copy = target / "source"
    if is_git_url(source):
        url, ref = source.removeprefix("git+"), None
        if "@" in url.rsplit("/", 1)[-1]:
            url, ref = url.rsplit("@", 1)
        command = ["git", "clone", "--quiet", "--depth", "1", *(["--branch", ref] if ref else [])]
        try:
            subprocess.run(
                [*command, "--", url, str(copy)],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
                env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin"},
            )
        except FileNotFoundError:
            raise InstallError("git is not installed: install it, or clone by hand") from None
        except subprocess.CalledProcessError as exc:
            last = (exc.stderr or "").strip().splitlines()[-1:] or ["no output"]
            raise InstallError(f"git clone {url} failed: {last[0]}") from None
        except subprocess.TimeoutExpired:
            raise InstallError(f"git clone {url} took over 5 minutes") from None
        shutil.rmtree(copy / ".git", ignore_errors=True)
        return copy
    folder = Path(source).expanduser()
    if not folder.is_dir():
        raise InstallError(f"{source} is not a folder or a git URL")
    shutil.copytree(folder, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    return copy


def _scan_folder(folder: Path) -> list[tuple[str, Finding]]:
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found.append((relative, Finding("dangerous", "a symbolic link: it may point anywhere")))
            continue
        if not path.is_file():
            continue
        in_scripts = relative.startswith("scripts/")
        if path.suffix.lower() not in TEXT_SUFFIXES and not in_scripts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        scan = scan_script if in_scripts or path.suffix in (".sh", ".bash", ".py") else scan_text
        found += [(relative, finding) for finding in scan(text)]
    return found


def inspect(copy: Path) -> list[Candidate]:
    """Every skill in the copy: one at its top, or the skill folders below it."""
    folders = [copy] if (copy / "SKILL.md").is_file() else list(skill_folders(copy))
    if not folders:
        raise InstallError("no SKILL.md found at the top or one or two folders down")
    if len(folders) > MAX_SKILLS:
        raise InstallError(f"{len(folders)} skills found; at most {MAX_SKILLS} at once")
    candidates = []
    for folder in folders:
        candidate = Candidate(folder)
        try:
            candidate.skill = load_skill(folder, "install")
        except SkillError as exc:
            candidate.error = str(exc)
        candidate.findings = _scan_folder(folder)
        candidates.append(candidate)
    return candidates

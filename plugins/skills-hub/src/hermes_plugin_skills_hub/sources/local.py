"""Skills from a folder on this machine, or from a git repository cloned with the ``git``
command (``https://host/repo.git[@REF]``, ``git+https://...``, ``git@host:repo``): one
skill at the top, or every skill folder below it."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from hermes_commons.ssrf import Refused
from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package, safe_path
from hermes_plugin_skills_hub.sources import Source

__all__ = ["LocalSource", "is_git"]

MAX_SKILLS = 100
GIT_ENV = (
    "HOME",
    "SSH_AUTH_SOCK",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
)
SKIPPED = {".git", "node_modules", "__pycache__"}


def is_git(identifier: str) -> bool:
    identifier = identifier.partition("#")[0]
    if identifier.startswith(("git+", "git@", "ssh://")):
        return True
    address = identifier.split("@", 1)[0] if identifier.startswith("https://") else identifier
    return identifier.startswith(("https://", "http://", "file://")) and (
        address.endswith(".git") or ".git@" in identifier
    )


class LocalSource(Source):
    name = "local"

    def owns(self, identifier: str) -> bool:
        return (
            is_git(identifier)
            or identifier.startswith(("/", "./", "../", "~"))
            or Path(identifier.partition("#")[0]).is_dir()
        )

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        return []

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        """The skills at ``identifier``; ``#PATH`` after it (as the lock keeps each skill of a
        repository or folder of several) picks the one at that path."""
        where, _, inside = identifier.partition("#")
        inside = safe_path(inside) if inside else ""
        if is_git(where):
            _check_host(where, fetcher)
            with tempfile.TemporaryDirectory(prefix="hermes-skills-git-") as scratch:
                revision = await asyncio.to_thread(_clone, where, Path(scratch) / "repo")
                return _packages(Path(scratch) / "repo", where, inside, "git", revision, fetcher)
        folder = Path(where).expanduser()
        if not folder.is_dir():
            raise HubError(f"{where} is not a folder")
        return _packages(folder.resolve(), str(folder.resolve()), inside, self.name, "", fetcher)


def _check_host(address: str, fetcher: Fetcher) -> None:
    """An http(s) repository passes the SSRF guard as every fetch does (git connects itself,
    so the name is judged here; an address that changes in between is git's to reach)."""
    url = address.removeprefix("git+")
    if url.startswith(("http://", "https://")):
        host = urlsplit(url)
        try:
            fetcher.guard.check_url(url)
            default = 443 if host.scheme == "https" else 80
            fetcher.guard.addresses(host.hostname or "", host.port or default)
        except Refused as exc:
            raise HubError(str(exc)) from None


def _split_ref(url: str) -> tuple[str, str | None]:
    """(URL, ref) of ``URL@REF``: the @ after the path's last part (an scp-style
    ``git@host:repo`` has its own @)."""
    cut = max(url.rfind("/"), url.rfind(":"))
    tail = url[cut + 1 :]
    if "@" in tail:
        base, _, ref = url.rpartition("@")
        return base, ref
    return url, None


def _clone(identifier: str, target: Path) -> str:
    url, ref = _split_ref(identifier.removeprefix("git+"))
    # No other transport (ext::, fd::) however the URL is written.
    allowed = [
        arg
        for name in ("https", "http", "ssh", "file")
        for arg in ("-c", f"protocol.{name}.allow=always")
    ]
    command = [
        "git",
        "-c",
        "protocol.allow=never",
        *allowed,
        "clone",
        "--quiet",
        "--depth",
        "1",
        *(["--branch", ref] if ref else []),
    ]
    # What git needs to reach a repository (a proxy, a CA, an ssh agent), and no more.
    env = {name: os.environ[name] for name in GIT_ENV if name in os.environ}
    env.update(GIT_TERMINAL_PROMPT="0", PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    try:
        subprocess.run(
            [*command, "--", url, str(target)],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        head = subprocess.run(
            ["git", "-C", str(target), "rev-parse", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
            env=env,
        )
    except FileNotFoundError:
        raise HubError(
            "git is not installed: install it, or clone by hand and install the folder"
        ) from None
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise HubError(f"git clone {url} failed: {last[0]}") from None
    except subprocess.TimeoutExpired:
        raise HubError(f"git clone {url} took over 5 minutes") from None
    shutil.rmtree(target / ".git", ignore_errors=True)
    return head.stdout.strip()


def _packages(
    root: Path, identifier: str, inside: str, source: str, revision: str, fetcher: Fetcher
) -> list[Package]:
    if inside:
        if not (root / inside / "SKILL.md").is_file():
            raise HubError(f"{identifier} holds no skill at {inside}")
        folders = [root / inside]
    else:
        folders = [root] if (root / "SKILL.md").is_file() else _skill_folders(root)
    if not folders:
        raise HubError(f"no SKILL.md in {identifier} (at its top or in the folders below)")
    if len(folders) > MAX_SKILLS:
        raise HubError(f"{len(folders)} skills in {identifier}; at most {MAX_SKILLS} at once")
    settings = fetcher.settings
    packages = []
    for folder in folders:
        files: dict[str, bytes] = {}
        for path in sorted(folder.rglob("*")):
            if any(part in SKIPPED for part in path.relative_to(folder).parts):
                continue
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                raise HubError(f"{relative} in {folder.name} is a symbolic link; refused")
            if not path.is_file():
                continue
            if len(files) >= settings.max_files or path.stat().st_size > settings.max_file_bytes:
                raise HubError(
                    f"{folder.name}: over {settings.max_files} files, or a file over "
                    f"{settings.max_file_bytes} bytes"
                )
            files[relative] = path.read_bytes()
        where = (
            identifier if folder == root else f"{identifier}#{folder.relative_to(root).as_posix()}"
        )
        packages.append(Package(where, source, "community", files, revision, name_hint=folder.name))
    return packages


def _skill_folders(root: Path) -> list[Path]:
    found = []
    for skill_md in sorted(root.rglob("SKILL.md")):
        relative = skill_md.parent.relative_to(root)
        if any(part in SKIPPED or part.startswith(".") for part in relative.parts):
            continue
        if not any(parent in found for parent in skill_md.parents):
            found.append(skill_md.parent)
    return found

"""Real peers for terminal backend tests: a Docker daemon and an SSH server on loopback.

Backends are tested against the real thing, not mocks. These helpers start what is
installed (``dockerd``, ``sshd``) as root, privately (own socket, own port, own keys), and
stop it afterwards. When a peer cannot be started here (not root, not installed) the
fixtures skip with the reason, unless ``HERMES_REQUIRE_SERVICES=1`` is set (CI sets it):
then they fail, so a backend never goes untested silently.

The Docker test images are built offline (no registry is needed): one from busybox-static,
and one that adds this machine's own Python 3 to it.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import os
import pwd
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PYTHON_TEST_IMAGE",
    "TEST_IMAGE",
    "SSHServer",
    "ServiceUnavailable",
    "busybox_image",
    "docker_daemon",
    "python_image",
    "sshd_server",
]

TEST_IMAGE = "hermes-test-busybox:1"
PYTHON_TEST_IMAGE = "hermes-test-python:1"
_DOCKER_ROOT = Path(tempfile.gettempdir()) / "hermes-test-dockerd"


class ServiceUnavailable(Exception):
    """A peer cannot run on this machine; the message says why and what would fix it."""


# --- Docker -------------------------------------------------------------------------------


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 5) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def _docker_request(
    socket_path: str, method: str, url: str, body: bytes | None = None, timeout: float = 5
) -> int:
    connection = _UnixConnection(socket_path, timeout)
    try:
        connection.request(method, url, body=body, headers={"Content-Type": "application/x-tar"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _pings(socket_path: str) -> bool:
    try:
        return _docker_request(socket_path, "GET", "/_ping") == 200
    except OSError:
        return False


@contextlib.contextmanager
def docker_daemon() -> Iterator[str]:
    """The URL (``unix://...``) of a running Docker daemon: the one DOCKER_HOST or the
    default socket names if it answers, else a private ``dockerd`` started for the tests."""
    configured = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if configured.startswith("unix://") and _pings(configured[len("unix://") :]):
        yield configured
        return
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise ServiceUnavailable("dockerd is not installed (apt-get install docker.io)")
    if os.geteuid() != 0:
        raise ServiceUnavailable("starting dockerd needs root")
    _DOCKER_ROOT.mkdir(parents=True, exist_ok=True)
    socket_path = str(_DOCKER_ROOT / "docker.sock")
    if _pings(socket_path):  # another test run's daemon: share it
        yield f"unix://{socket_path}"
        return
    log = open(_DOCKER_ROOT / "dockerd.log", "ab")  # noqa: SIM115 - open while dockerd runs
    process = subprocess.Popen(
        [
            dockerd,
            "--host",
            f"unix://{socket_path}",
            "--data-root",
            str(_DOCKER_ROOT / "data"),
            "--exec-root",
            str(_DOCKER_ROOT / "exec"),
            "--pidfile",
            str(_DOCKER_ROOT / "dockerd.pid"),
        ],
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not _pings(socket_path):
            if process.poll() is not None or time.monotonic() > deadline:
                raise ServiceUnavailable(
                    f"dockerd did not start; see {_DOCKER_ROOT / 'dockerd.log'}"
                )
            time.sleep(0.1)
        yield f"unix://{socket_path}"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


class _Tar:
    """An image's root folder, written as a tar in memory."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buffer, mode="w")  # noqa: SIM115 - closed in data()

    def add(
        self,
        path: str,
        data: bytes = b"",
        mode: int = 0o644,
        kind: bytes = tarfile.REGTYPE,
        link: str = "",
    ) -> None:
        info = tarfile.TarInfo(path)
        info.type, info.mode, info.size, info.linkname = kind, mode, len(data), link
        self.tar.addfile(info, io.BytesIO(data) if data else None)

    def data(self) -> bytes:
        self.tar.close()
        return self.buffer.getvalue()


def _busybox_root(tar: _Tar) -> None:
    busybox = shutil.which("busybox")
    if busybox is None:
        raise ServiceUnavailable("busybox is not installed (apt-get install busybox-static)")
    applets = subprocess.run(
        [busybox, "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    for folder in ("bin", "etc", "tmp", "root", "workspace"):
        tar.add(folder, mode=0o1777 if folder == "tmp" else 0o755, kind=tarfile.DIRTYPE)
    tar.add("bin/busybox", Path(busybox).read_bytes(), 0o755)
    for applet in applets:
        if applet != "busybox":
            tar.add(f"bin/{applet}", kind=tarfile.SYMTYPE, link="busybox", mode=0o777)
    tar.add("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    tar.add("etc/group", b"root:x:0:\n")


def _import_image(socket_path: str, name: str, root: bytes, path: str) -> str:
    repository, _, tag = name.partition(":")
    changes = "&".join(
        f"changes={change}"
        for change in (
            f"ENV%20PATH%3D{path.replace('/', '%2F').replace(':', '%3A')}",
            "CMD%20%5B%22%2Fbin%2Fsh%22%5D",
        )
    )
    status = _docker_request(
        socket_path,
        "POST",
        f"/images/create?fromSrc=-&repo={repository}&tag={tag or 'latest'}&{changes}",
        root,
        timeout=120,
    )
    if status != 200:
        raise ServiceUnavailable(f"docker could not import the test image {name} (HTTP {status})")
    return name


def busybox_image(docker_url: str, name: str = TEST_IMAGE) -> str:
    """Build (once) a ~2 MB image from busybox-static, offline; returns its name."""
    socket_path = docker_url[len("unix://") :]
    if _docker_request(socket_path, "GET", f"/images/{name}/json") == 200:
        return name
    tar = _Tar()
    _busybox_root(tar)
    return _import_image(socket_path, name, tar.data(), "/bin")


_STDLIB_LEFT_OUT = {
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
    "lib2to3",
    "pydoc_data",
}


def _libraries(binary: str) -> list[str]:
    """The shared libraries ``binary`` loads (ldd), the loader included."""
    done = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False)
    found = []
    for line in done.stdout.splitlines():
        words = line.split()
        path = words[2] if "=>" in words and len(words) > 2 else words[0] if words else ""
        if path.startswith("/"):
            found.append(path)
    return found


def python_image(docker_url: str, name: str = PYTHON_TEST_IMAGE) -> str:
    """Build (once) the busybox image plus this machine's system Python 3 (the interpreter,
    the libraries it loads and its standard library, ~60 MB), offline; returns its name."""
    socket_path = docker_url[len("unix://") :]
    if _docker_request(socket_path, "GET", f"/images/{name}/json") == 200:
        return name
    python = Path("/usr/bin/python3").resolve()
    version = python.name.removeprefix("python")
    stdlib = Path(f"/usr/lib/python{version}")
    if not python.is_file() or not stdlib.is_dir() or shutil.which("ldd") is None:
        raise ServiceUnavailable(
            "no system Python 3 to copy into the test image (apt-get install python3)"
        )
    tar = _Tar()
    _busybox_root(tar)
    libraries = set(_libraries(str(python)))
    for module in (stdlib / "lib-dynload").glob("*.so"):
        libraries.update(_libraries(str(module)))
    folders: set[str] = set()

    def add_file(source: Path, target: str, mode: int = 0o644) -> None:
        parent = target.rsplit("/", 1)[0]
        missing = []
        while parent and parent not in folders:
            missing.append(parent)
            folders.add(parent)
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
        for folder in reversed(missing):
            tar.add(folder, mode=0o755, kind=tarfile.DIRTYPE)
        tar.add(target, source.read_bytes(), mode)

    folders.update({"bin", "etc", "tmp", "root", "workspace"})
    add_file(python, f"usr/bin/{python.name}", 0o755)
    tar.add("usr/bin/python3", kind=tarfile.SYMTYPE, link=python.name, mode=0o777)
    for library in sorted(libraries):
        add_file(Path(library).resolve(), library.lstrip("/"), 0o755)
    for source in sorted(stdlib.rglob("*")):
        relative = source.relative_to(stdlib)
        if relative.parts[0] in _STDLIB_LEFT_OUT or relative.parts[0].startswith("config-"):
            continue
        if source.is_file() and "__pycache__" not in relative.parts:
            add_file(source, f"usr/lib/python{version}/{relative}")
    return _import_image(socket_path, name, tar.data(), "/usr/bin:/bin")


# --- SSH ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SSHServer:
    host: str
    port: int
    user: str
    key_file: str
    known_hosts: str
    home: str


def wait_listening(
    port: int,
    process: subprocess.Popen[bytes] | None,
    log_file: Path,
    name: str,
    seconds: float = 15.0,
) -> None:
    """Wait until something listens on 127.0.0.1:``port``; :class:`ServiceUnavailable`
    with the end of ``log_file`` when ``process`` exits first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=1),
        ):
            return
        if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
            log = log_file.read_text(errors="replace")[-500:] if log_file.exists() else ""
            raise ServiceUnavailable(f"{name} did not start: {log}")
        time.sleep(0.05)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ensure_user(user: str) -> str:
    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/sh", user],
            check=True,
            capture_output=True,
        )
        # useradd leaves the account locked, and sshd (without PAM) refuses locked accounts.
        subprocess.run(["usermod", "-p", "*", user], check=True, capture_output=True)
        return pwd.getpwnam(user).pw_dir


@contextlib.contextmanager
def sshd_server(user: str = "hermes-test") -> Iterator[SSHServer]:
    """A private sshd on 127.0.0.1 that lets ``user`` in with a fresh key."""
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
    keygen = shutil.which("ssh-keygen")
    if sshd is None or keygen is None:
        raise ServiceUnavailable("sshd is not installed (apt-get install openssh-server)")
    if os.geteuid() != 0:
        raise ServiceUnavailable("starting sshd with a test user needs root")
    home = _ensure_user(user)
    with tempfile.TemporaryDirectory(prefix="hermes-sshd-") as folder:
        base = Path(folder)
        os.chmod(base, 0o755)
        for name in ("host_key", "client_key"):
            subprocess.run(
                [keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(base / name)], check=True
            )
        # This server's own key list, not the user's ~/.ssh: two test runs on one machine
        # share the user, and each would replace the other's key. It sits under /tmp, which
        # sshd's StrictModes refuses (world-writable), hence StrictModes no (a test sshd).
        authorized = base / "authorized_keys"
        authorized.write_text((base / "client_key.pub").read_text())
        authorized.chmod(0o644)  # sshd reads it as the user
        port = free_port()
        config = base / "sshd_config"
        config.write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {base / 'host_key'}\n"
            f"PidFile {base / 'sshd.pid'}\nAuthorizedKeysFile {authorized}\nStrictModes no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "Subsystem sftp internal-sftp\nMaxSessions 64\nMaxStartups 64\n"
        )
        host_key = (base / "host_key.pub").read_text().split()
        known_hosts = base / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
        Path("/run/sshd").mkdir(exist_ok=True)
        process = subprocess.Popen(
            [sshd, "-D", "-f", str(config), "-E", str(base / "sshd.log")],
            start_new_session=True,
        )
        try:
            wait_listening(port, process, base / "sshd.log", "sshd", seconds=10)
            yield SSHServer(
                host="127.0.0.1",
                port=port,
                user=user,
                key_file=str(base / "client_key"),
                known_hosts=str(known_hosts),
                home=home,
            )
        finally:
            process.terminate()
            process.wait(10)


def unavailable(what: str, exc: ServiceUnavailable) -> None:
    """Skip the test that needs ``what``, saying why; fail it where services are required
    (``HERMES_REQUIRE_SERVICES=1``, as CI sets), so nothing goes untested there."""
    import pytest

    if os.environ.get("HERMES_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{what} is required here (HERMES_REQUIRE_SERVICES=1) but: {exc}")
    pytest.skip(f"{what} is not available: {exc}")

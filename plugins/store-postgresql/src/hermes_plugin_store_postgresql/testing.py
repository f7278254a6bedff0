"""A real PostgreSQL for tests of the shared store: Debian's server (the ``postgresql``
package) in a cluster of its own under the machine's temp folder, listening on 127.0.0.1
only, with durability off (``fsync``, ``synchronous_commit``: tests, not production).

The server refuses to run as root, so when the tests run as root (CI does) the cluster
belongs to the ``postgres`` account the package creates. One server serves a whole test run
(about two seconds to start); each test makes a database of its own::

    url = postgres.create_database()    # postgresql://hermes@127.0.0.1:PORT/test_1

``psql`` (the package's client) makes it, so the kit itself needs no PostgreSQL driver.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_testkit.services import ServiceUnavailable, free_port, unavailable

__all__ = ["PostgresServer", "postgres_server"]

USER = "hermes"
_counter = itertools.count(1)
_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "128MB",
}


def _binaries() -> Path:
    """The newest installed server's bin folder (Debian keeps them per major version)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    postgres = shutil.which("postgres")
    if postgres is None:
        raise ServiceUnavailable(
            "PostgreSQL is not installed (apt-get install postgresql postgresql-contrib)"
        )
    return Path(postgres).parent


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    bin_dir: Path
    user: str = USER
    data_dir: Path = Path()
    """The cluster's folder (``pg_hba.conf`` is there): a test may change how clients log in,
    then :meth:`reload`."""

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` with psql; its output (tuples only, unaligned)."""
        done = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-X",
                "-q",
                "-t",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                database,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def reload(self) -> None:
        """Make the server read its configuration files again (``pg_hba.conf``)."""
        self.psql("SELECT pg_reload_conf()")

    @contextlib.contextmanager
    def password_role(self, url: str, role: str, password: str) -> Iterator[str]:
        """A role that must log in with ``password`` (scram-sha-256, as a real server asks),
        owning the database of ``url``; the URL for it, without the password. The cluster
        trusts every other login, as before, and this one too once the block ends."""
        database = url.rsplit("/", 1)[1]
        quoted = password.replace("'", "''")
        self.psql(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{quoted}'")
        self.psql(f'ALTER DATABASE "{database}" OWNER TO "{role}"')
        hba = self.data_dir / "pg_hba.conf"
        original = hba.read_text()
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + original)
        self.reload()
        try:
            yield f"postgresql://{role}@{self.host}:{self.port}/{database}"
        finally:
            hba.write_text(original)
            self.reload()

    def create_database(self, name: str | None = None) -> str:
        """A fresh, empty database (UTF-8, with pg_trgm and unaccent available); its URL."""
        name = name or f"test_{os.getpid()}_{next(_counter)}"
        self.psql(f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8'")
        return self.url(name)


def _as_owner(owner: pwd.struct_passwd | None) -> list[str]:
    return ["runuser", "-u", owner.pw_name, "--"] if owner is not None else []


@contextlib.contextmanager
def postgres_server(settings: Mapping[str, str] | None = None) -> Iterator[PostgresServer]:
    """Start a private PostgreSQL on 127.0.0.1; stopped and removed on exit. ``settings``
    are added to the server's (a bench loads ``pg_stat_statements`` to count round trips)."""
    bin_dir = _binaries()
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise ServiceUnavailable(
                "running as root needs the postgres account (the postgresql package makes it)"
            ) from None
    base = Path(tempfile.mkdtemp(prefix="hermes-test-postgres-"))
    data, sockets = base / "data", base / "sockets"
    sockets.mkdir()
    if owner is not None:
        for path in (base, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    init = subprocess.run(
        [
            *_as_owner(owner),
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            "--auth=trust",  # a private cluster on loopback, for tests only
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise ServiceUnavailable(f"initdb failed: {init.stderr.strip()[-400:]}")
    port = free_port()
    options = [f"-c{name}={value}" for name, value in {**_SETTINGS, **(settings or {})}.items()]
    log = (base / "server.log").open("wb")
    server = subprocess.Popen(
        [
            *_as_owner(owner),
            str(bin_dir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(sockets),
            *options,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    running = PostgresServer("127.0.0.1", port, bin_dir, data_dir=data)
    try:
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run(
                [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-q"],
                check=False,
                timeout=10,
            )
            if ready.returncode == 0:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                text = (base / "server.log").read_text(errors="replace")[-600:]
                raise ServiceUnavailable(f"PostgreSQL did not start: {text}")
            time.sleep(0.1)
        yield running
    finally:
        if server.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGINT)  # "fast" shutdown: ends every session
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL on 127.0.0.1 for the test run; ``postgres.create_database()`` gives
    each test an empty database's URL."""
    try:
        with postgres_server() as server:
            yield server
    except ServiceUnavailable as exc:
        unavailable("a PostgreSQL server", exc)

"""Run commands in one long-lived Docker container per session, through the docker SDK.

The container is hardened by default: read-only root filesystem with a writable workspace
and an in-memory /tmp, every capability dropped, no-new-privileges, and limits on
processes, memory and CPU. It carries labels naming this process, so a container left
behind by a crash is removed the next time a docker backend starts on this machine.

Files travel through ``exec`` (``cat`` out, base64 in), not the archive API: that API cannot
write into the tmpfs mounts and read-only root filesystems this backend uses.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import docker
import requests
from docker.errors import DockerException, ImageNotFound, NotFound

from hermes_plugin_backend_docker.config import DockerConfig
from hermes_sdk.terminal import (
    BackendContext,
    BackendUnavailable,
    CommandResult,
    FileEntry,
    OnOutput,
    OutputCollector,
    TerminalBackend,
    kill_script,
    watch,
    wrap_command,
)

LABEL = "org.hermes.backend"
OWNER_LABEL = "org.hermes.owner"
SESSION_LABEL = "org.hermes.session"
_CHUNK = 48_000  # bytes per exec when writing a file: an exec argument is capped at 128 KiB
# Host variables that describe the host, not the container: the image decides those.
_HOST_ONLY = frozenset({"PATH", "HOME", "SHELL", "USER", "LOGNAME", "TMPDIR", "PWD"})
# "~" in a path means the container user's home, which only the container's shell knows.
_PATH_ARG = 'p=$1; case $p in "~") p=$HOME;; "~/"*) p=$HOME/${p#"~/"};; esac; '
_LIST = (
    _PATH_ARG + 'cd -- "$p" || exit 2; for f in .* *; do '
    'case $f in .|..) continue;; esac; [ -e "$f" ] || [ -L "$f" ] || continue; '
    'if [ -L "$f" ]; then t=link; elif [ -d "$f" ]; then t=dir; '
    'elif [ -f "$f" ]; then t=file; else t=other; fi; s=0; '
    '[ $t = file ] && s=$(stat -c %s -- "$f" 2>/dev/null || wc -c <"$f"); '
    "printf '%s\\t%s\\t%s\\000' $t $s \"$f\"; done"
)
_ALIVE = "while :; do sleep 86400; done"
_SECONDS = 60  # the daemon's API timeout for one request


def _unavailable(exc: BaseException) -> BackendUnavailable:
    message = " ".join(str(exc).split()) or type(exc).__name__
    return BackendUnavailable(
        f"docker: {message}",
        "check that the Docker daemon is running (`docker info`), then retry the command",
    )


_INFRASTRUCTURE = (DockerException, requests.RequestException, ConnectionError)


class DockerBackend(TerminalBackend):
    name = "docker"

    def __init__(self, context: BackendContext, config: DockerConfig) -> None:
        super().__init__(config.workspace)
        self.config = config
        self.isolated = not config.mount_workspace
        try:
            self.client = (
                docker.DockerClient(base_url=config.host, timeout=_SECONDS)
                if config.host
                else docker.from_env(timeout=_SECONDS)
            )
            self.api = self.client.api
            self.api.ping()
            reap_orphans(self.client)
            self.container_id = self._start(context)
        except ImageNotFound as exc:
            raise BackendUnavailable(
                f"docker: image {config.image!r} is not on this machine",
                "ask the user to pull or build it (docker pull / docker build), or to set "
                "docker.image",
            ) from exc
        except _INFRASTRUCTURE as exc:
            raise _unavailable(exc) from exc

    def _start(self, context: BackendContext) -> str:
        config = self.config
        tmpfs = {"/tmp": f"rw,exec,nosuid,size={config.tmp_size}"}
        volumes: dict[str, dict[str, str]] = {}
        user = config.user
        if config.mount_workspace:
            volumes[context.cwd] = {"bind": config.workspace, "mode": "rw"}
            if user is None:  # files made in the workspace belong to the user, not root
                user = f"{os.getuid()}:{os.getgid()}"
        else:
            tmpfs[config.workspace] = f"rw,exec,nosuid,size={config.tmp_size}"
        container = self.client.containers.run(
            config.image,
            command=["/bin/sh", "-c", _ALIVE],
            name=f"hermes-{context.session_id[:12]}-{uuid.uuid4().hex[:6]}",
            detach=True,
            init=True,  # reaps the processes commands leave behind
            labels={
                LABEL: "docker",
                OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}",
                SESSION_LABEL: context.session_id,
            },
            environment={k: v for k, v in context.env.items() if k not in _HOST_ONLY},
            working_dir=config.workspace,
            read_only=config.read_only,
            tmpfs=tmpfs,
            volumes=volumes,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=config.pids_limit,
            mem_limit=config.memory,
            nano_cpus=int(config.cpus * 1e9),
            network_mode=config.network,
            user=user,
        )
        return str(container.id)

    # --- commands --------------------------------------------------------------------------

    def _exec(self, argv: list[str], env: Mapping[str, str] | None = None) -> str:
        try:
            return str(
                self.api.exec_create(self.container_id, argv, environment=dict(env or {}))["Id"]
            )
        except NotFound as exc:
            raise BackendUnavailable(
                "docker: the session's container is gone (removed or stopped)",
                "retry: a new container will be started",
            ) from exc
        except _INFRASTRUCTURE as exc:
            raise _unavailable(exc) from exc

    def _exit_code(self, exec_id: str) -> int:
        try:
            code = self.api.exec_inspect(exec_id).get("ExitCode")
        except _INFRASTRUCTURE as exc:
            raise _unavailable(exc) from exc
        return int(code) if code is not None else -1

    def _capture(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        exec_id = self._exec(argv)
        try:
            out, err = self.api.exec_start(exec_id, demux=True)
        except _INFRASTRUCTURE as exc:
            raise _unavailable(exc) from exc
        return self._exit_code(exec_id), out or b"", err or b""

    def run(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
        on_output: OnOutput | None = None,
        cancel: threading.Event | None = None,
    ) -> CommandResult:
        started = time.perf_counter()
        token = uuid.uuid4().hex[:12]
        pidfile = f"/tmp/.hermes-run-{token}"
        stdin_path = None
        if stdin is not None:
            stdin_path = f"/tmp/.hermes-stdin-{token}"
            self.write_file(stdin_path, stdin.encode("utf-8"))
        directory = self.resolve(cwd) if cwd is not None else self.cwd
        script = wrap_command(
            command, directory, self.marker, pidfile=pidfile, stdin_path=stdin_path
        )
        exec_id = self._exec([self.config.shell, "-c", script], env)
        collector = OutputCollector(self.marker, on_output)
        failures: list[BaseException] = []
        finished = threading.Event()

        def pump() -> None:
            try:
                for out, err in self.api.exec_start(exec_id, stream=True, demux=True):
                    if out:
                        collector.stdout(out)
                    if err:
                        collector.stderr(err)
            except _INFRASTRUCTURE as exc:
                failures.append(exc)
            finally:
                finished.set()

        if timeout is None and cancel is None:
            pump()
            timed_out = interrupted = False
        else:
            threading.Thread(target=pump, name="docker-exec", daemon=True).start()
            timed_out, interrupted = watch(
                finished, lambda: self._kill(pidfile), timeout=timeout, cancel=cancel
            )
        if failures:
            raise _unavailable(failures[0])
        exit_code = self._exit_code(exec_id)
        result, new_cwd = collector.result(
            exit_code, started, timed_out=timed_out, interrupted=interrupted
        )
        if new_cwd is not None and cwd is None:
            self.cwd = new_cwd
        return result

    def _kill(self, pidfile: str) -> None:
        with contextlib.suppress(BackendUnavailable, *_INFRASTRUCTURE):
            self._capture(["/bin/sh", "-c", kill_script(pidfile)])

    # --- files -----------------------------------------------------------------------------

    def read_file(self, path: str) -> bytes:
        target = self.resolve(path)
        code, out, err = self._capture(["/bin/sh", "-c", _PATH_ARG + 'cat -- "$p"', "sh", target])
        if code != 0:
            raise _os_error(err, target)
        return out

    def write_file(self, path: str, data: bytes) -> None:
        target = self.resolve(path)
        partial = f"{target}.hermes-partial"
        steps = [data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [b""]
        for index, chunk in enumerate(steps):
            encoded = base64.b64encode(chunk).decode("ascii")
            redirect = ">" if index == 0 else ">>"
            parents = 'mkdir -p -- "$(dirname -- "$p")" && ' if index == 0 else ""
            script = f'{_PATH_ARG}{parents}printf %s "$2" | base64 -d {redirect}"$p.hermes-partial"'
            code, _, err = self._capture(["/bin/sh", "-c", script, "sh", target, encoded])
            if code != 0:
                self._capture(["/bin/sh", "-c", _PATH_ARG + 'rm -f -- "$p"', "sh", partial])
                raise _os_error(err, target)
        code, _, err = self._capture(
            ["/bin/sh", "-c", _PATH_ARG + 'mv -f -- "$p.hermes-partial" "$p"', "sh", target]
        )
        if code != 0:
            raise _os_error(err, target)

    def list_dir(self, path: str) -> list[FileEntry]:
        target = self.resolve(path)
        code, out, err = self._capture(["/bin/sh", "-c", _LIST, "sh", target])
        if code != 0:
            raise _os_error(err or b"No such file or directory", target)
        entries = []
        for record in out.split(b"\0"):
            if record:
                kind, size, name = record.decode("utf-8", "replace").split("\t", 2)
                entries.append(FileEntry(name, kind, int(size) if size.isdigit() else 0))
        return sorted(entries, key=lambda item: item.name)

    def close(self) -> None:
        with contextlib.suppress(*_INFRASTRUCTURE):
            self.client.containers.get(self.container_id).remove(force=True)
        with contextlib.suppress(Exception):  # closing the HTTP pool must not fail a close
            self.client.close()


def _os_error(stderr: bytes, path: str) -> OSError:
    message = " ".join(stderr.decode("utf-8", "replace").split()) or "failed"
    lowered = message.lower()
    for words, number in (
        ("no such file", errno.ENOENT),
        ("not a directory", errno.ENOTDIR),
        ("is a directory", errno.EISDIR),
        ("permission denied", errno.EACCES),
        ("read-only file system", errno.EROFS),
    ):
        if words in lowered:
            return OSError(number, message, path)
    return OSError(errno.EIO, message, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_orphans(client: Any) -> int:
    """Remove containers that Hermes processes on this machine left behind (crashed before
    closing them); returns how many."""
    removed = 0
    host = socket.gethostname()
    # The low-level listing carries the labels: the high-level one inspects each container
    # after listing it, and fails outright when another process removed one meanwhile.
    for container in client.api.containers(all=True, filters={"label": LABEL}):
        labels = container.get("Labels") or {}
        owner_host, _, pid = str(labels.get(OWNER_LABEL, "")).rpartition(":")
        if owner_host != host or not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(*_INFRASTRUCTURE):  # gone already (NotFound) is fine too
            client.api.remove_container(container["Id"], force=True)
            removed += 1
    return removed

import pytest
from hermes_plugin_backend_ssh.backend import SSHBackend
from hermes_plugin_backend_ssh.config import SSHConfig

from hermes_sdk.terminal import BackendContext, TerminalBackend
from hermes_testkit import SSHServer, TerminalBackendTests


class TestSSHBackend(TerminalBackendTests):
    @pytest.fixture(autouse=True)
    def _server(self, ssh_server: SSHServer) -> None:
        self.server = ssh_server

    def make_backend(self, context: BackendContext) -> TerminalBackend:
        server = self.server
        backend = SSHBackend(
            SSHConfig(
                host=server.host,
                port=server.port,
                user=server.user,
                key_file=server.key_file,
                known_hosts=server.known_hosts,
                use_agent=False,
            )
        )
        # A fresh folder per test on the remote side, as the suite expects.
        folder = f"{server.home}/work-{context.session_id}-{id(backend):x}"
        backend.run(f"rm -rf {folder} && mkdir -p {folder}")
        backend.cwd = folder
        return backend

import pytest
from hermes_plugin_backend_docker.backend import DockerBackend
from hermes_plugin_backend_docker.config import DockerConfig

from hermes_sdk.terminal import BackendContext, TerminalBackend
from hermes_testkit import TerminalBackendTests


class TestDockerBackend(TerminalBackendTests):
    """A container with the workspace mounted from the test's folder."""

    @pytest.fixture(autouse=True)
    def _daemon(self, docker_url: str, docker_test_image: str) -> None:
        self.config = DockerConfig(host=docker_url, image=docker_test_image, network="none")

    def make_backend(self, context: BackendContext) -> TerminalBackend:
        return DockerBackend(context, self.config)


class TestIsolatedDockerBackend(TerminalBackendTests):
    """A container that reaches none of the host's files (an in-memory workspace)."""

    @pytest.fixture(autouse=True)
    def _daemon(self, docker_url: str, docker_test_image: str) -> None:
        self.config = DockerConfig(
            host=docker_url, image=docker_test_image, network="none", mount_workspace=False
        )

    def make_backend(self, context: BackendContext) -> TerminalBackend:
        backend = DockerBackend(context, self.config)
        assert backend.isolated
        return backend

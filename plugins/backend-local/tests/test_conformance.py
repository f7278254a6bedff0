from hermes_plugin_backend_local.backend import LocalBackend

from hermes_sdk.terminal import BackendContext, TerminalBackend
from hermes_testkit import TerminalBackendTests


class TestLocalBackend(TerminalBackendTests):
    def make_backend(self, context: BackendContext) -> TerminalBackend:
        return LocalBackend(context.cwd, context.env)


class TestLocalBackendWithPosixSh(TerminalBackendTests):
    """The same contract when the shell is a plain POSIX sh (dash), not bash."""

    def make_backend(self, context: BackendContext) -> TerminalBackend:
        return LocalBackend(context.cwd, context.env, shell="/bin/sh")

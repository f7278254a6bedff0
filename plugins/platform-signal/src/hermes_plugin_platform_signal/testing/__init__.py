"""signal-cli's HTTP daemon on loopback, for tests: :class:`FakeSignalCli`."""

from hermes_plugin_platform_signal.testing.signal_cli import ACCOUNT, FakeSignalCli, Sent

__all__ = ["ACCOUNT", "FakeSignalCli", "Sent"]

"""A BlueBubbles server on loopback, for tests: :class:`FakeBlueBubbles`."""

from hermes_plugin_platform_bluebubbles.testing.bluebubbles_server import (
    PASSWORD,
    FakeBlueBubbles,
    Sent,
)

__all__ = ["PASSWORD", "FakeBlueBubbles", "Sent"]

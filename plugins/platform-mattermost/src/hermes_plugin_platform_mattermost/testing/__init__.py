"""A Mattermost server on loopback, for tests: :class:`FakeMattermost`."""

from hermes_plugin_platform_mattermost.testing.mattermost_server import TOKEN, FakeMattermost, Post

__all__ = ["TOKEN", "FakeMattermost", "Post"]

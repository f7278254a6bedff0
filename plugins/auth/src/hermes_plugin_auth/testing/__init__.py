"""The auth plugin's peer for tests: a loopback authorization server (RFC 8628 device
authorization, RFC 7636 PKCE, RFC 6749 token refresh, a Copilot-style token exchange)."""

from hermes_plugin_auth.testing.oauth_server import OAuthServer

__all__ = ["OAuthServer"]

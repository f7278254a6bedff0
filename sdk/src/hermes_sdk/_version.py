"""The SDK version: the contract's semver (breaking hook changes bump the major)."""

__version__ = "0.1.0"

"""The commons' version, released with the SDK it is built on."""

__version__ = "0.1.0"

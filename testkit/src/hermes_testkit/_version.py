"""The test kit's version, released with the SDK whose contract it tests."""

__version__ = "0.1.0"

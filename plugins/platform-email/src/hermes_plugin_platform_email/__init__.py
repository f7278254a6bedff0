"""The email platform."""

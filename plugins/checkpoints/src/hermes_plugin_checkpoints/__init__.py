"""Undo for file edits (work in progress)."""

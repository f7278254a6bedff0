"""hermes-kernel: plugin loading, configuration and the ``hermes`` command.

Importing this package is cheap on purpose: ``hermes --version`` must not pay for anything
it does not use, so submodules are imported where they are needed.
"""

from hermes_kernel._version import __version__

__all__ = ["__version__"]

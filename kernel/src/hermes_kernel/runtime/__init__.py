"""The runtime contract (:mod:`hermes_sdk.runtime`) as the kernel implements it."""

"""hermes-commons: what Hermes plugins share, written once.

The contract (hook specs, spec types, the runtime) is ``hermes_sdk``; these are the shared
implementations plugins and the kernel use beside it, each in a module of its own:
``files`` (atomic writes with a file mode), ``locks`` (a cross-process file lock),
``dotenv`` (the strict ``.env`` reader and writer), ``redact``, ``proposals`` (changes waiting
for the user's approval), ``ssrf`` and ``ssrf_http`` (the SSRF guard and its httpx
transport), ``http`` and ``http_transport`` (what HTTP model providers share), ``sse``,
``media_read`` and ``media_urls`` (reading and fetching media), ``leases`` (named leases in
the state store), ``text`` (one-line previews, sizes, times), ``sections`` (reading a config
section), ``scan`` (marking untrusted text), ``leaving`` (signals and clean exits),
``platform_files``, ``transcripts``, ``throttle``, ``addresses``, ``environment`` and
``help_file``. Import the module you need; nothing is imported here.
"""

from hermes_commons._version import __version__

__all__ = ["__version__"]

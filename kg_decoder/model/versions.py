"""The versions of kg-decoder and of what it runs on, as recorded on every run's agent."""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata


@lru_cache(maxsize=1)
def software_versions() -> dict[str, str]:
    """The versions recorded on the decode agent."""
    versions = {}
    for name in ("kg-decoder", "unstructured", "pyoxigraph"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return versions

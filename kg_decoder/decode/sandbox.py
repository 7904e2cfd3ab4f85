"""A program run on a document's bytes (LibreOffice) confined to its own folder, with no network.

A document can make the program that lays it out reach outside it: a picture linked by URL is
fetched, an RTF field includes a file of the machine into the page. Cleaning the package
(:mod:`kg_decoder.decode.office.external_references`) removes the references it can see; the
confinement holds for the rest. Where bubblewrap (``bwrap``) can make namespaces, the program runs in
new ones: no network but a loopback of its own, its own process tree, and a file system that holds
only the system's programs, libraries and fonts (read-only), a private ``/tmp`` and the folder it
was given. Where bwrap cannot, ``unshare`` gives it at least a network of its own (as root, or in a
user namespace); where neither can, it runs as it is, with the package cleaned and LibreOffice's
profile blocking links (:func:`confinement` says which).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import time
from typing import Optional

# System folders a program needs (read-only): its binaries and libraries, the fonts and their
# configuration, LibreOffice's own configuration. Not /etc as a whole (accounts, keys), nor /home,
# /root, /srv, /var or the store.
_SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/fonts", "/etc/libreoffice", "/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime",
                 "/var/cache/fontconfig")


def confined(command: list[str], folder: str) -> list[str]:
    """``command`` wrapped so that it runs confined to ``folder`` (see the module's text)."""
    how = confinement()
    if how == "bwrap":
        return _bwrap(folder, _install_folder(command[0])) + ["--"] + command
    if how == "unshare":
        return _unshare() + ["--"] + command
    return command


_found: Optional[str] = None  # how programs are confined here, once found
_probed_at = -math.inf  # when a probe last found no confinement: tried again after a while (bwrap installed)
_PROBE_AGAIN = 60.0  # seconds


def confinement() -> Optional[str]:
    """How programs are confined on this machine: "bwrap" (file system, network and processes),
    "unshare" (network only) or None (found by running ``true`` so; a machine found without one is
    probed again after a minute, not before every document)."""
    global _found, _probed_at
    if _found is None and time.monotonic() - _probed_at >= _PROBE_AGAIN:
        if shutil.which("bwrap") and _works(_bwrap("/") + ["--", "true"]):
            _found = "bwrap"
        elif shutil.which("unshare") and _works(_unshare() + ["--", "true"]):
            _found = "unshare"
        _probed_at = time.monotonic()
    return _found


# LibreOffice's own packages install to /opt/libreofficeX.Y with its binary in program/: that folder
# is bound read-only beside the system's, and no other (a program found in a home folder, or at the
# root, would bind the folders the confinement keeps out).
_INSTALLED_BINARIES = ("/program/soffice", "/program/soffice.bin")
_NEVER_BOUND = ("/", "/home", "/root", "/srv", "/var", "/etc", "/tmp", "/mnt", "/media", "/run")


def _install_folder(program: str) -> Optional[str]:
    """The LibreOffice installation a program is, where it lies outside the system folders; None for
    any other program or place."""
    real = os.path.realpath(shutil.which(program) or program)
    if any(real.startswith(folder + "/") for folder in _SYSTEM_FOLDERS) or not real.endswith(_INSTALLED_BINARIES):
        return None
    install = os.path.dirname(os.path.dirname(real))
    if install in _NEVER_BOUND or os.path.dirname(install) == "/home":  # the root, a user's home
        return None
    return install


def _bwrap(folder: str, install: Optional[str] = None) -> list[str]:
    arguments = ["bwrap", "--unshare-all", "--cap-drop", "ALL"]
    for path in _SYSTEM_FOLDERS:
        if os.path.islink(path):  # a merged /usr: /lib -> usr/lib
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    for path in _SYSTEM_FILES:
        arguments += ["--ro-bind-try", path, path]
    if install:
        arguments += ["--ro-bind-try", install, install]
    arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if folder != "/":
        arguments += ["--bind", folder, folder, "--setenv", "HOME", folder, "--chdir", folder]
    return arguments


def _unshare() -> list[str]:
    return ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--net"]


def _works(command: list[str]) -> bool:
    try:
        return subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


__all__ = ["confined", "confinement"]

"""The command of a Python process a decode starts beside itself (a rendering's readers, the texts'
reading process), importing only the modules it runs, from the kg_decoder this process runs.

The packages above those modules are made empty in it: ``kg_decoder/__init__`` imports every stage
(the graph, the web app's reads, every backend), 0.7 to 1.3 CPU-seconds of such a process's start
against 0.3 for a rendering's reader, paid while the decode itself needs the CPU.
"""

from __future__ import annotations

import os
import sys

_DECODE = os.path.dirname(os.path.abspath(__file__))
_PACKAGES = {"kg_decoder": os.path.dirname(_DECODE),
             "kg_decoder.decode": _DECODE,
             "kg_decoder.decode.backends": os.path.join(_DECODE, "backends")}
_EMPTY_PACKAGES = f"""
import sys, types
for name, folder in {_PACKAGES!r}.items():
    package = sys.modules[name] = types.ModuleType(name)
    package.__path__ = [folder]
"""


def python_command(code: str) -> list[str]:
    """The command that runs ``code`` in a fresh Python, its ``kg_decoder`` imports of modules alone."""
    return [sys.executable, "-c", _EMPTY_PACKAGES + code]


__all__ = ["python_command"]

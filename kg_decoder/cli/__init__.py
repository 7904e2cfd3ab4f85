"""The command line (``kg-decoder``)."""

from .main import load_web_app, main

__all__ = ["load_web_app", "main"]

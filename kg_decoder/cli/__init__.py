"""The command line (``kg-decoder``)."""

from .main import main
from .serving import load_web_app

__all__ = ["load_web_app", "main"]

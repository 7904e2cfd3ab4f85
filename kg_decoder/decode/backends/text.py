"""Plain text in any common encoding, CSV and TSV: unstructured, in the caller's character set
where one is given (else detected)."""

from __future__ import annotations

from ...model import DecodeOptions
from .base import Backend, Format

_PARTITIONERS = {"text": ("unstructured.partition.text", "partition_text"),
                 "csv": ("unstructured.partition.csv", "partition_csv"),
                 "tsv": ("unstructured.partition.tsv", "partition_tsv")}


class TextBackend(Backend):
    partitioners = _PARTITIONERS
    family = "text"
    formats = (
        Format("csv", "text/csv", ("csv",), text_based=True),
        Format("tsv", "text/tab-separated-values", ("tsv", "tab"), text_based=True, aliases=("text/tsv",)),
        Format("text", "text/plain", ("txt", "text", "log"), text_based=True),
    )

    def partition_arguments(self, fmt: Format, options: DecodeOptions) -> dict:
        return {"encoding": options.encoding} if options.encoding else {}

"""JSON and JSON lines, by their structure (unstructured reads only its own element JSON): each
object or array stays whole while its text fits the section size, and is split into its members
only when it does not; each element records its RFC 6901 JSON Pointer."""

from __future__ import annotations

import json
from typing import Optional

from ...model import DecodeOptions, Element, Partitioned, ProgressCallback
from ...model.errors import CorruptDocument
from .base import Backend, Format
from .unstructured_glue import checked


class JsonBackend(Backend):
    family = "json"
    formats = (
        Format("json", "application/json", ("json",), text_based=True),
        Format("jsonl", "application/x-ndjson", ("jsonl", "ndjson"), text_based=True,
               aliases=("application/jsonl",)),
    )

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        return partition_json(data, fmt.name, options.section_max_size)


def partition_json(data: bytes, format_name: str, limit: int) -> Partitioned:
    """JSON and JSON lines by their structure: each object or array whole while its text fits
    ``limit`` characters, split into its members only when it does not; each element records
    its JSON Pointer (for JSON lines, prefixed by the line's position among the values)."""
    try:
        text = data.decode("utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptDocument(f"the {format_name.upper()} file is not UTF-8 or UTF-16: {exc}") from None
    values: list[tuple[str, object]] = []
    if format_name == "json":
        try:
            values.append(("", json.loads(text)))
        except ValueError as exc:
            raise CorruptDocument(f"the file is not JSON: {exc}") from None
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        for number, line in enumerate(lines):
            try:
                values.append((f"/{number}", json.loads(line)))
            except ValueError as exc:
                raise CorruptDocument(f"line {number + 1} of the JSON lines file is not JSON: {exc}") from None
    elements: list[Element] = []
    for pointer, value in values:
        _json_elements(value, pointer, limit, elements)
    return checked(Partitioned(format=format_name, elements=elements, strategy="native"))


def _json_elements(value: object, pointer: str, limit: int, out: list[Element]) -> None:
    if isinstance(value, (dict, list)) and not value:
        return
    rendered = json.dumps(value, ensure_ascii=False, indent=2)
    if len(rendered) <= limit or not isinstance(value, (dict, list)):
        out.append(Element(index=len(out), category="JSON", text=rendered, json_pointer=pointer))
        return
    members = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in members:
        _json_elements(child, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}", limit, out)

"""A document's images as the store holds them: listing and export of their bytes.

For a vision pipeline that works from the graph: nothing is decoded again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

from .store import KgStore, open_store

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/tiff": "tiff", "image/gif": "gif",
               "image/bmp": "bmp", "image/webp": "webp", "image/jp2": "jp2", "image/svg+xml": "svg"}


def document_images(document: str, *, store: Union[KgStore, str, os.PathLike]) -> list[dict]:
    """The images of ``document`` in reading order, one dict each (IRI, page, bbox, size, MIME...)."""
    if not isinstance(store, KgStore):
        store = open_store(store)
    images = []
    for row in store.select("document_images", document=document):
        image = {"iri": row["image"], "index": row["index"], "segment": row["segment"],
                 "page_number": row.get("pageNumber"), "sheet_name": row.get("sheetName"),
                 "bbox": [row["left"], row["top"], row["right"], row["bottom"]] if "left" in row else None,
                 "page_width": row.get("pageWidth"), "page_height": row.get("pageHeight"),
                 "coordinate_system": row.get("coordinateSystem"),
                 "width": row.get("pixelWidth"), "height": row.get("pixelHeight"), "mime_type": row.get("mimeType"),
                 "byte_size": row.get("byteSize"), "sha256": row.get("sha256"),
                 "skipped_reason": row.get("skippedReason"), "alt_text": row.get("altText"),
                 "source_url": row.get("sourceUrl"), "anchor_cell": row.get("anchorCell"),
                 "follows": row.get("follows"), "element_id": row.get("elementId")}
        images.append(image)
    return images


def export_images(document: str, folder: Union[str, os.PathLike], *,
                  store: Union[KgStore, str, os.PathLike]) -> list[Path]:
    """Write the stored bytes of each image of ``document`` into ``folder``; return the files written."""
    if not isinstance(store, KgStore):
        store = open_store(store)
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for position, image in enumerate(document_images(document, store=store), start=1):
        if not image["sha256"]:
            continue
        extension = _EXTENSIONS.get(image["mime_type"] or "", "bin")
        path = target / f"{position:03d}-{image['iri'].rsplit(':', 1)[-1][:8]}.{extension}"
        path.write_bytes(store.library.get(image["sha256"]))
        written.append(path)
    return written

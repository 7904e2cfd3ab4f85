"""A document's images as the store holds them: listing and export of their bytes.

For a vision pipeline that works from the graph: nothing is decoded again. Export names are
made here from the image's position and IRI, never from a name found inside the document, so
they cannot leave the target folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import ImageInfo
from ..model.errors import InvalidOption, UnknownEntity

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/tiff": "tiff", "image/gif": "gif",
               "image/bmp": "bmp", "image/webp": "webp", "image/jp2": "jp2", "image/svg+xml": "svg"}


@with_store(read_only=True)
def document_images(document: str, *, store: Union[KgStore, StorePath]) -> list[ImageInfo]:
    """The images of ``document`` in reading order (IRI, page, box, pixel size, MIME type...). Reads only."""
    if not isinstance(document, str) or not store.has_document(document):
        raise UnknownEntity(f"no document {str(document):.200} in the store")
    return store.document_images(document)


@with_store(read_only=True)
def export_images(document: str, folder: Union[str, os.PathLike], *,
                  store: Union[KgStore, StorePath]) -> list[Path]:
    """Write the stored bytes of each image of ``document`` into ``folder``; return the files written.

    Each file is named ``NNN-<first 8 hex of the IRI>.<extension of its MIME type>``.
    """
    images = document_images(document, store=store)
    target = Path(folder)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:
        raise InvalidOption(f"cannot write images into {str(folder)[:200]}: {getattr(exc, 'strerror', None) or exc}") \
            from None
    written = []
    for position, image in enumerate(images, start=1):
        if not image.sha256:
            continue
        path = target / _file_name(position, image)
        path.write_bytes(store.blob(image.sha256, image.iri))
        written.append(path)
    return written


def _file_name(position: int, image: ImageInfo) -> str:
    """A name made of safe characters only.

    >>> _file_name(3, ImageInfo(iri="urn:image:0123abcd-ffff", index=0, segment="s", mime_type="image/png"))
    '003-0123abcd.png'
    """
    stem = "".join(c for c in image.iri.rsplit(":", 1)[-1][:8] if c.isalnum()) or "image"
    return f"{position:03d}-{stem}.{_EXTENSIONS.get(image.mime_type or '', 'bin')}"

"""A page's picture made fit for a model's context: scaled down to a bounded size, with the boxes
of a traced quote drawn on it (solid for verified boxes, lighter for an element's box)."""

from __future__ import annotations

import io
from typing import Sequence

from ..model import Box
from ..model.errors import RequestError

MIN_SIDE, MAX_SIDE = 256, 2048  # pixels on the longer side an agent may ask for
MAX_BYTES = 3_000_000  # of the PNG sent (base64 makes it a third more)
_COLOURS = {"verified": (220, 30, 30), "element": (230, 140, 0), "unverified": (120, 120, 120)}


def fit_and_draw(png: bytes, boxes: Sequence[Box], max_side: int) -> tuple[bytes, int, int]:
    """``png`` at most ``max_side`` pixels on its longer side and :data:`MAX_BYTES` long, ``boxes``
    drawn on it (each placed by its page's size): (the PNG, its width, its height).

    >>> from PIL import Image
    >>> buffer = io.BytesIO(); Image.new("RGB", (1000, 500), "white").save(buffer, "PNG")
    >>> box = Box(1, 10.0, 10.0, 50.0, 20.0, 100.0, 50.0, "pdf-points-top-left", "characters", "urn:element:x")
    >>> fit_and_draw(buffer.getvalue(), [box], 400)[1:]
    (400, 200)
    """
    from PIL import Image, ImageDraw

    if not MIN_SIDE <= max_side <= MAX_SIDE:
        raise RequestError(f"max_side is from {MIN_SIDE} to {MAX_SIDE} pixels", code="bad-size")
    with Image.open(io.BytesIO(png)) as opened:
        picture = opened.convert("RGB")
    side = max_side
    while True:
        scale = min(1.0, side / max(picture.size))
        size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
        scaled = picture.resize(size, Image.LANCZOS) if size != picture.size else picture.copy()
        draw = ImageDraw.Draw(scaled)
        for box in boxes:
            if not (box.page_width and box.page_height):
                continue
            x, y = scaled.width / box.page_width, scaled.height / box.page_height
            draw.rectangle([box.left * x - 2, box.top * y - 2, box.right * x + 2, box.bottom * y + 2],
                           outline=_COLOURS.get(str(box.verification), _COLOURS["unverified"]), width=3)
        out = io.BytesIO()
        scaled.save(out, "PNG", optimize=False)
        if out.tell() <= MAX_BYTES or side <= MIN_SIDE:
            return out.getvalue(), scaled.width, scaled.height
        side = max(MIN_SIDE, int(side * 0.7))

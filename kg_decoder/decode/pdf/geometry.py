"""Where a point of a PDF page's user space shows on the page as a viewer displays it.

Every kg-decoder box on a PDF page is in the displayed page's coordinates: the visible
area (the CropBox, clipped to the MediaBox) turned by the page's ``/Rotate``, origin at
its top-left corner, in the page's units. PDFium gives character and image boxes in user
space, unrotated; pdfminer (and so unstructured's ``fast``) gives element boxes on the
displayed MediaBox. Both go through one :class:`PageGeometry`.

Units: PDF user-space units, which are points unless the page sets ``/UserUnit``; page
sizes and boxes share them, so a box keeps its place relative to the page either way
(poppler, PDFium and pdfminer all measure in these units too).
"""

from __future__ import annotations

from dataclasses import dataclass

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in user space (y up)
BBox = tuple[float, float, float, float]  # left, top, right, bottom on the displayed page (y down)


@dataclass(frozen=True)
class PageGeometry:
    """A page's MediaBox, its visible area (CropBox ∩ MediaBox) and its clockwise rotation."""

    media: Rect
    visible: Rect
    rotation: int = 0

    @classmethod
    def create(cls, media: Rect, crop: Rect | None = None, rotation: int = 0) -> "PageGeometry":
        """Normalise the boxes (corners in any order; a CropBox outside the MediaBox counts as absent)
        and the rotation (any multiple of 90, negative too)."""
        media = _normal(media)
        visible = media
        if crop is not None:
            crop = _normal(crop)
            clipped = (max(crop[0], media[0]), max(crop[1], media[1]), min(crop[2], media[2]), min(crop[3], media[3]))
            if clipped[2] > clipped[0] and clipped[3] > clipped[1]:
                visible = clipped
        turn = int(round(rotation / 90.0)) * 90 % 360
        return cls(media=media, visible=visible, rotation=turn)

    @classmethod
    def of(cls, page) -> "PageGeometry":
        """The geometry of a pypdfium2 page. PDFium reads a MediaBox or CropBox the page inherits from
        its page tree only into the visible area it gives (``get_bbox``): a page without a MediaBox of
        its own is measured on that area (not on PDFium's stand-in, a letter-size page)."""
        visible = page.get_bbox()
        return cls.create(page.get_mediabox(fallback_ok=False) or visible, visible, page.get_rotation())

    @property
    def size(self) -> tuple[float, float]:
        """Width and height of the displayed page."""
        width, height = self.visible[2] - self.visible[0], self.visible[3] - self.visible[1]
        return (height, width) if self.rotation in (90, 270) else (width, height)

    def point(self, x: float, y: float) -> tuple[float, float]:
        """A user-space point on the displayed page."""
        return _turn(self.visible, self.rotation, x, y)

    def box(self, rect: Rect) -> BBox:
        """A user-space rectangle (x0, y0, x1, y1, any order) as the box it covers on the displayed page."""
        if self.rotation == 0 and rect[0] <= rect[2] and rect[1] <= rect[3]:  # a glyph's box on an upright page
            area = self.visible  # the numbers :func:`_box` gives, without its turns (a page's every glyph comes here)
            height = area[3] - area[1]
            return (rect[0] - area[0], height - (rect[3] - area[1]), rect[2] - area[0], height - (rect[1] - area[1]))
        return _box(self.visible, self.rotation, rect)

    def user_rect(self, box: BBox) -> Rect:
        """A box on the displayed page as the user-space rectangle it covers (the inverse of :meth:`box`).

        >>> geometry = PageGeometry.create((0, 0, 600, 800), rotation=90)
        >>> geometry.user_rect(geometry.box((10, 20, 30, 60)))
        (10.0, 20.0, 30.0, 60.0)
        """
        x0, y0 = _unturn(self.visible, self.rotation, box[0], box[1])
        x1, y1 = _unturn(self.visible, self.rotation, box[2], box[3])
        return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))

    def clip(self, box: BBox) -> BBox | None:
        """The part of a box on the displayed page that a viewer shows; None when it shows none of it
        (text outside the CropBox is in the text layer, but no one sees it)."""
        width, height = self.size
        clipped = (max(box[0], 0.0), max(box[1], 0.0), min(box[2], width), min(box[3], height))
        return clipped if clipped[2] > clipped[0] and clipped[3] > clipped[1] else None

    def from_displayed_media(self, box: BBox) -> BBox:
        """A box measured on the displayed MediaBox (pdfminer's device space, top-left origin),
        moved onto the displayed visible area: the same rotation, so only the origin moves."""
        shift_x, shift_y, _, _ = _box(self.media, self.rotation, self.visible)
        return (box[0] - shift_x, box[1] - shift_y, box[2] - shift_x, box[3] - shift_y)


def _normal(rect) -> Rect:
    x0, y0, x1, y1 = (float(v) for v in rect)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def _turn(area: Rect, rotation: int, x: float, y: float) -> tuple[float, float]:
    """User space → ``area`` displayed with ``rotation`` (clockwise), origin top-left, y down."""
    dx, dy = x - area[0], y - area[1]
    width, height = area[2] - area[0], area[3] - area[1]
    if rotation == 90:
        return dy, dx
    if rotation == 180:
        return width - dx, dy
    if rotation == 270:
        return height - dy, width - dx
    return dx, height - dy


def _unturn(area: Rect, rotation: int, x: float, y: float) -> tuple[float, float]:
    """A point of ``area`` displayed with ``rotation`` → user space (the inverse of :func:`_turn`)."""
    width, height = area[2] - area[0], area[3] - area[1]
    dx, dy = {90: (y, x), 180: (width - x, y), 270: (width - y, height - x)}.get(rotation, (x, height - y))
    return float(area[0] + dx), float(area[1] + dy)


def _box(area: Rect, rotation: int, rect: Rect) -> BBox:
    # Quarter turns keep rectangles axis-aligned: two opposite corners give the box.
    x0, y0 = _turn(area, rotation, rect[0], rect[1])
    x1, y1 = _turn(area, rotation, rect[2], rect[3])
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


__all__ = ["BBox", "PageGeometry", "Rect"]

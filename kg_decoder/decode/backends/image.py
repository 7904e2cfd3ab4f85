"""PNG, JPEG, TIFF: one page per frame, read by OCR (tesseract); the file is its page's picture."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Optional

from ...model import PIXELS, DecodeOptions, Element, Page, Partitioned, Problem, ProgressCallback
from ...model.errors import CorruptDocument, InvalidOption, UnsafeDocument
from ..images import describe_image, pixels_refused
from .base import Backend, Format, PdfConverter, drawing_scale
from ..image_text import on_white
from ..pdf.page_ocr import image_scale, ocr_page
from .unstructured_glue import call, convert_all, ocr_languages, require_layout_model, require_ocr_languages


class ImageBackend(Backend):
    family = "image"
    formats = (
        Format("png", "image/png", ("png",), page_based=True),
        Format("jpeg", "image/jpeg", ("jpg", "jpeg"), page_based=True, aliases=("image/jpg",)),
        Format("tiff", "image/tiff", ("tif", "tiff"), page_based=True),
    )

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as image:
                frames = getattr(image, "n_frames", 1)
                sizes = []
                for frame in range(frames):
                    image.seek(frame)
                    sizes.append(image.size)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise UnsafeDocument(pixels_refused(exc)) from None
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise CorruptDocument(f"the file could not be read as {fmt.name.upper()}: {exc}") from None
        if options.strategy == "hi_res":
            require_layout_model()
        strategy = "hi_res" if options.strategy == "hi_res" else "ocr_only"
        if options.strategy == "fast":
            raise InvalidOption("an image has no text layer: use --strategy auto or ocr_only")
        require_ocr_languages(ocr_languages(options))
        problems: list[Problem] = []
        pages = [Page(number=i + 1, width=float(w), height=float(h), coordinate_system=PIXELS, strategy=strategy)
                 for i, (w, h) in enumerate(sizes)]
        if strategy == "hi_res":
            from unstructured.partition.image import partition_image

            raw = call(fmt.name, partition_image, file=io.BytesIO(data), strategy=strategy,
                       languages=ocr_languages(options))
            elements = convert_all(raw, {p.number: p for p in pages}, page_based=True)
        else:
            elements = _ocr_frames(data, pages, options.ocr_languages, problems)
        # An image with no readable text is still a document of one page (its picture).
        return Partitioned(format=fmt.name, elements=elements, pages=pages, strategy=strategy, problems=problems)

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        """The file is its page's one picture: the whole page, before the words OCR read in it."""
        mime, width, height = describe_image(data)
        page = pages[0] if pages else Page(number=1)
        box = (0.0, 0.0, float(width), float(height)) if width and height else None
        image = Element(0, "Image", "", page_number=page.number, bbox=box, image_data=data, image_mime=mime,
                        image_width=width, image_height=height)
        return [image] + [e for e in elements if not e.is_image]

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        """The frame itself, as a PNG (the image's pixels are its coordinate system), made smaller when
        it has more than :data:`~kg_decoder.decode.backends.base.MAX_DRAWING_PIXELS` (the trace view
        places boxes by fractions of the page)."""
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            if not 1 <= page_number <= getattr(image, "n_frames", 1):
                return None
            image.seek(page_number - 1)
            scale = drawing_scale(image.width, image.height, 1.0)
            if scale < 1.0:
                image.draft("RGB", (round(image.width * scale), round(image.height * scale)))  # JPEG: decoded smaller
            frame = image.convert("RGB")
            if scale < 1.0:
                frame.thumbnail((round(image.width * scale), round(image.height * scale)))
            buffer = io.BytesIO()
            frame.save(buffer, "PNG")
            return buffer.getvalue()

    def warm_up(self) -> None:
        import unstructured.partition.image  # noqa: F401


def _ocr_frames(data: bytes, pages: list[Page], languages: str, problems: list[Problem]) -> list[Element]:
    """Each frame read by OCR (enlarged when small), boxes in its own pixels; each page records its
    mean word confidence."""
    from PIL import Image

    elements: list[Element] = []
    with Image.open(io.BytesIO(data)) as image:
        for page in pages:
            image.seek(page.number - 1)
            frame = on_white(image)
            scale = image_scale(*frame.size)
            if scale > 1.0:
                frame = frame.resize((round(frame.width * scale), round(frame.height * scale)),
                                     Image.Resampling.LANCZOS)
            found, page.confidence = ocr_page(frame, scale, languages, page.number, problems)
            elements += found
    return [replace(element, index=index) for index, element in enumerate(elements)]

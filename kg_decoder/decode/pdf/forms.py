"""What a PDF shows beyond its text layer: the values of its form fields and the text of its
annotations, each an element placed in its page's reading order with its box there.

- A form field's widget (category ``FormField``): its fully qualified name, type (text, checkbox,
  radio, choice, signature, button), value (the export value) and the value it shows where that
  differs (a choice's label, a number its format action wrote as ``1,123,213,321.00``), read-only
  and required flags. Its text is what it shows: the text its appearance draws, else its value; a
  check box or radio button shows its export value when on (an unset radio group shows nothing).
- An annotation with text (category ``Annotation``): what a stamp, watermark or free-text
  annotation draws, or the note of a markup annotation (a sticky note, a highlight, ink...), with
  its type, author and dates.

Left out: hidden and no-view annotations, those off the visible page, links and pop-ups (a pop-up
shows its parent's note), and any whose words the page already holds at its place (a flattened form,
or a value drawn twice), so nothing is read twice. The annotations are read with pypdf, and only on
pages where PDFium sees one that can hold text.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from ...model import Element, Page, Problem, Verification
from .fonts import parsed
from .geometry import BBox, PageGeometry, Rect

_NO_TEXT_SUBTYPES = {2, 16}  # PDFium's link and pop-up annotations: nothing of their own to read
_HIDDEN = 2 | 32  # annotation flags: Hidden, NoView
_READ_ONLY, _REQUIRED = 1, 2  # field flags
_RADIO, _PUSH_BUTTON = 1 << 15, 1 << 16
_DRAWN = {"/FreeText", "/Stamp", "/Watermark"}  # annotations whose text is what they draw
_SKIPPED = {"/Link", "/Popup", "/Widget", "/PrinterMark", "/TrapNet", "/Movie", "/Screen", "/3D", "/RichMedia"}
_STANDARD_STAMPS = {"Approved", "Experimental", "NotApproved", "AsIs", "Expired", "NotForPublicRelease",
                    "Confidential", "Final", "Sold", "Departmental", "ForComment", "TopSecret", "Draft",
                    "ForPublicRelease"}
_PDF_DATE = re.compile(r"D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+\-])?(\d{2})?'?(\d{2})?")

# What the page already shows at a place: (page number, rectangle in user space, its box on the displayed
# page) -> the text there.
ShownAt = Callable[[int, "Rect", BBox], str]


def pages_with_annotations(pdf) -> list[int]:
    """The pages (1-based) holding an annotation that can show text, as PDFium counts them (cheap: no
    second parser opens a PDF without any)."""
    import pypdfium2.raw as pdfium_c

    found = []
    for index in range(len(pdf)):
        page = pdf[index]
        for k in range(pdfium_c.FPDFPage_GetAnnotCount(page.raw)):
            annotation = pdfium_c.FPDFPage_GetAnnot(page.raw, k)
            if not annotation:
                continue
            subtype = pdfium_c.FPDFAnnot_GetSubtype(annotation)
            pdfium_c.FPDFPage_CloseAnnot(annotation)
            if subtype not in _NO_TEXT_SUBTYPES:
                found.append(index + 1)
                break
    return found


@dataclass
class Found:
    """An annotation read on a page: its element (None: left out, hidden or already in the text layer),
    its box, and for a text or choice field its stored value, folded (unstructured reads those values)."""

    page_number: int
    box: Optional[BBox]
    value: str
    element: Optional[Element]


def annotation_elements(data: bytes, password: Optional[str], numbers: list[int],
                        geometries: dict[int, PageGeometry], shown_at: ShownAt) -> list[Found]:
    """The form fields and annotations of the given pages, in page order, each with its box."""
    import pypdf

    with parsed(data) as reader:  # the document as the fonts' heights parsed it
        if reader.is_encrypted:  # decrypted in a reader of its own: the shared one stays as the fonts read it
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            reader.decrypt(password or "")
        return _annotations_found(reader, numbers, geometries, shown_at)


def _annotations_found(reader, numbers: list[int], geometries: dict[int, PageGeometry],
                       shown_at: ShownAt) -> list[Found]:
    form = reader.trailer["/Root"].get("/AcroForm")
    form = form.get_object() if form is not None else {}
    regenerated = bool(form.get("/NeedAppearances", False))  # a viewer draws values anew: the value shows
    found: list[Found] = []
    for number in numbers:
        geometry = geometries.get(number)
        if geometry is None or number > len(reader.pages):
            continue
        page = reader.pages[number - 1]
        for reference in _annotations(page):
            try:
                annotation = reference.get_object()
                element = _read(page, annotation, regenerated)
                value = _stored_value(annotation)
            except Exception:  # one damaged annotation must not cost the others
                continue
            rect, box = _place(annotation, geometry)
            if element is not None and (box is None or _folded(element.text) in _folded(shown_at(number, rect, box))):
                element = None
            if element is not None:
                element.page_number, element.bbox = number, box
            if element is not None or value:
                found.append(Found(number, box, value, element))
    return found


def with_annotations(elements: list[Element], found: list[Found]) -> list[Element]:
    """``elements`` with the annotations in their places, numbered afresh: a field whose value
    unstructured read (an element of the value's text in the widget's box) takes that element's place
    (or removes it, when the field is left out); the others go after the last element of their page
    that starts above their middle (first on their page when none does)."""
    merged: list[Element] = []
    taken: set[int] = set()
    for element in elements:
        match = next((k for k, item in enumerate(found) if k not in taken and _same_value(element, item)), None)
        if match is None:
            merged.append(element)
            continue
        taken.add(match)
        if found[match].element is not None:
            merged.append(found[match].element)
    rest = [item.element for k, item in enumerate(found) if item.element is not None and k not in taken]
    for annotation in sorted(rest, key=lambda a: (a.page_number or 0, (a.bbox[1] + a.bbox[3]) / 2)):
        middle = (annotation.bbox[1] + annotation.bbox[3]) / 2
        position = None
        page_start = 0
        for k, element in enumerate(merged):
            if (element.page_number or 0) < annotation.page_number:
                page_start = k + 1
            elif element.page_number == annotation.page_number and (
                    element.bbox is None or element.bbox[1] <= middle):
                position = k + 1
        merged.insert(position if position is not None else page_start, annotation)
    return [replace(element, index=i) for i, element in enumerate(merged)]


def _same_value(element: Element, item: Found) -> bool:
    """Whether an element of the first reading is a field's value unstructured read off its widget."""
    if not item.value or item.box is None or element.bbox is None or element.page_number != item.page_number:
        return False
    if any(abs(a - b) > 1.0 for a, b in zip(element.bbox, item.box)):
        return False
    text = _folded(element.text)
    return bool(text) and text in item.value


def _stored_value(annotation) -> str:
    """A text or choice field's stored value, folded (what unstructured reads of a widget); else ''."""
    if str(annotation.get("/Subtype", "")) != "/Widget":
        return ""
    field = _FieldChain(annotation)
    if field.inherited("/FT") not in ("/Tx", "/Ch"):
        return ""
    value = field.inherited("/V")
    values = value if isinstance(value, list) else [value]
    return _folded(" ".join(_plain(v) for v in values if v is not None))


def with_forms(data: bytes, pdf, elements: list[Element], pages: list[Page], geometries: dict[int, PageGeometry],
               password: Optional[str], problems: list[Problem]) -> list[Element]:
    """``elements`` (a PDF's, in page order) with its form fields and text annotations in their places.
    Annotations that cannot be read are a problem, not a lost document."""
    try:
        numbers = pages_with_annotations(pdf)
        if not numbers:
            return elements
        read_by_ocr = {page.number for page in pages if page.strategy == "ocr_only"}
        layers: dict[int, object] = {}

        def shown_at(number: int, rect: Rect, box: BBox) -> str:
            if number in read_by_ocr:  # no text layer: what OCR read there
                return " ".join(e.text for e in elements if e.page_number == number and e.bbox is not None
                                and _overlap(e.bbox, box))
            if number not in layers:
                layers[number] = pdf[number - 1].get_textpage()
            return layers[number].get_text_bounded(*rect)

        found = annotation_elements(data, password, numbers, geometries, shown_at)  # each text page its page's
    except Exception as exc:  # pypdf and PDFium raise anything on damaged annotations: keep the text
        problems.append(Problem.of("forms-not-read", "form fields and annotations not read", exc))
        return elements
    return with_annotations(elements, found) if found else elements


def _overlap(a: BBox, b: BBox) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _annotations(page) -> list:
    annotations = page.get("/Annots")
    try:
        annotations = annotations.get_object() if annotations is not None else []
        return list(annotations or [])
    except Exception:
        return []


def _read(page, annotation, regenerated: bool) -> Optional[Element]:
    subtype = str(annotation.get("/Subtype", ""))
    if int(annotation.get("/F", 0) or 0) & _HIDDEN:
        return None
    if subtype == "/Widget":
        return _field(page, annotation, regenerated)
    if subtype in _SKIPPED:
        return None
    if subtype in _DRAWN:
        drawn = _drawn_text(page, annotation)
        text = (_plain(annotation.get("/Contents")) or drawn) if subtype == "/FreeText" else (
            drawn or _plain(annotation.get("/Contents")))
        name = str(annotation.get("/Name", "")).lstrip("/")
        if not text and subtype == "/Stamp" and name in _STANDARD_STAMPS:
            text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).upper()
    else:
        text = _plain(annotation.get("/Contents"))
    if not text:
        return None
    properties: dict = {"annotationType": subtype.lstrip("/")}
    author = _plain(annotation.get("/T"))
    if author:
        properties["author"] = author
    for key, name in (("/CreationDate", "createdAt"), ("/M", "modifiedAt")):
        when = pdf_date(annotation.get(key))
        if when is not None:
            properties[name] = when
    return Element(0, "Annotation", text, properties=properties, verification=Verification.VERIFIED)


def _field(page, widget, regenerated: bool) -> Optional[Element]:
    """A widget's field: its name, type, value and what it shows."""
    field = _FieldChain(widget)
    kind, flags = field.inherited("/FT"), int(field.inherited("/Ff") or 0)
    value = field.inherited("/V")
    properties: dict = {"fieldName": field.full_name()}
    shown = ""
    if kind == "/Btn" and flags & _PUSH_BUTTON:
        properties["fieldType"] = "button"
        shown = _plain(_dictionary(widget.get("/MK")).get("/CA")) or _drawn_text(page, widget)
    elif kind == "/Btn":
        properties["fieldType"] = "radio" if flags & _RADIO else "checkbox"
        state = str(widget.get("/AS", "/Off")).lstrip("/")
        on = next((str(k).lstrip("/") for k in _dictionary(_dictionary(widget.get("/AP")).get("/N")) if k != "/Off"),
                  None)
        if state == "Off" or state != on:
            if flags & _RADIO:
                return None  # an unset radio button: the group's value is the one that is on
            properties["fieldValue"] = "Off"
            shown = "Off"
        else:
            properties["fieldValue"] = shown = _export_value(field, widget, state)
    elif kind == "/Ch":
        properties["fieldType"] = "choice"
        chosen = [_plain(v) for v in value] if isinstance(value, list) else [_plain(value)] if value else []
        labels = _choice_labels(field.inherited("/Opt"))
        if chosen:
            properties["fieldValue"] = ", ".join(chosen)
        shown = ", ".join(labels.get(v, v) for v in chosen if v)
        if not regenerated:
            shown = _drawn_text(page, widget) or shown
    elif kind == "/Sig":
        properties["fieldType"] = "signature"
        signature = _dictionary(value)
        for key, name in (("/Name", "signer"), ("/Reason", "signingReason"), ("/Location", "signingLocation")):
            if _plain(signature.get(key)):
                properties[name] = _plain(signature.get(key))
        when = pdf_date(signature.get("/M"))
        if when is not None:
            properties["signedAt"] = when
        shown = _drawn_text(page, widget) or properties.get("signer", "")
    else:
        properties["fieldType"] = "text"
        text_value = _plain(value)
        if text_value:
            properties["fieldValue"] = text_value
        shown = text_value if regenerated else (_drawn_text(page, widget) or text_value)
    shown = shown.strip()
    if not shown:
        return None
    if properties.get("fieldValue") is not None and _folded(properties["fieldValue"]) != _folded(shown):
        properties["shownValue"] = shown
    properties["readOnly"] = bool(flags & _READ_ONLY)
    properties["required"] = bool(flags & _REQUIRED)
    return Element(0, "FormField", shown, properties=properties, verification=Verification.VERIFIED)


class _FieldChain:
    """A widget and the fields above it (``/Parent``): inherited entries and the fully qualified name."""

    def __init__(self, widget) -> None:
        self.chain = [widget]
        seen = {id(widget)}
        node = widget
        while node.get("/Parent") is not None and len(self.chain) < 32:
            node = node["/Parent"].get_object()
            if id(node) in seen:
                break
            seen.add(id(node))
            self.chain.append(node)

    def inherited(self, key: str):
        for node in self.chain:
            if key in node:
                value = node[key]
                return value.get_object() if hasattr(value, "get_object") else value
        return None

    def full_name(self) -> str:
        return ".".join(part for part in (_plain(node.get("/T")) for node in reversed(self.chain)) if part)


def _export_value(field: _FieldChain, widget, state: str) -> str:
    """A check box's or radio button's value when on: its state's name, or the export value the field's
    /Opt gives that widget (by its place among the field's widgets)."""
    options = field.inherited("/Opt")
    parent = field.chain[1] if len(field.chain) > 1 else None
    kids = parent.get("/Kids") if parent is not None else None
    if isinstance(options, list) and kids is not None:
        for position, kid in enumerate(kids.get_object()):
            if kid.get_object() is widget and position < len(options):
                return _plain(options[position]) or state
    return state


def _choice_labels(options) -> dict[str, str]:
    """A choice field's export value -> the label it shows (an /Opt entry may be a [value, label] pair)."""
    labels = {}
    for option in options if isinstance(options, list) else []:
        option = option.get_object() if hasattr(option, "get_object") else option
        if isinstance(option, list) and len(option) == 2:
            labels[_plain(option[0])] = _plain(option[1])
    return labels


def _drawn_text(page, annotation) -> str:
    """The text an annotation's normal appearance draws (its words, whitespace folded)."""
    appearance = _dictionary(annotation.get("/AP")).get("/N")
    appearance = appearance.get_object() if appearance is not None else None
    if appearance is None or not hasattr(appearance, "get_data"):
        return ""
    try:
        drawn = page.extract_xform_text(appearance)
    except Exception:  # a font or stream pypdf cannot read: nothing drawn that can be read
        return ""
    return " ".join(drawn.split())


def _dictionary(value) -> dict:
    value = value.get_object() if hasattr(value, "get_object") else value
    return value if hasattr(value, "get") and hasattr(value, "keys") else {}


def _plain(value) -> str:
    """A PDF string (or a rich-text stream's plain words) as text."""
    value = value.get_object() if hasattr(value, "get_object") else value
    if value is None:
        return ""
    if hasattr(value, "get_data"):
        value = re.sub(r"<[^>]+>", " ", value.get_data().decode("utf-8", "replace"))
    return " ".join(str(value).split())


def _place(annotation, geometry: PageGeometry) -> tuple[Optional[Rect], Optional[BBox]]:
    """An annotation's rectangle in user space and the part of it the displayed page shows (None: none)."""
    try:
        x0, y0, x1, y1 = (float(v) for v in annotation["/Rect"])
    except (KeyError, TypeError, ValueError):
        return None, None
    rect = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    box = geometry.clip(geometry.box(rect))
    return rect, tuple(round(v, 3) for v in box) if box is not None else None


def _folded(text: str) -> str:
    return "".join(letter for letter in text.casefold() if not letter.isspace())


def pdf_date(value) -> Optional[datetime]:
    """A PDF date string (``D:20151009101316-07'00'``) as a datetime, None when it is not one.

    >>> pdf_date("D:20151009101316-07'00'").isoformat()
    '2015-10-09T10:13:16-07:00'
    """
    text = _plain(value)
    match = _PDF_DATE.match(text) if text else None
    if match is None:
        return None
    year, month, day, hour, minute, second, sign, tz_hours, tz_minutes = match.groups()
    try:
        zone = None
        if sign in ("Z", "z"):
            zone = timezone.utc
        elif sign in ("+", "-"):
            offset = timedelta(hours=int(tz_hours or 0), minutes=int(tz_minutes or 0))
            zone = timezone(offset if sign == "+" else -offset)
        return datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                        int(second or 0), tzinfo=zone)
    except ValueError:
        return None


__all__ = ["annotation_elements", "pages_with_annotations", "pdf_date", "with_annotations", "with_forms"]

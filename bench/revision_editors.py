"""The documents of the revision benchmark as paragraphs, and their edits: Markdown and text, HTML
(lxml), DOCX (python-docx), PPTX (python-pptx); a DOCX's own page marks (bench/revisions.py)."""

from __future__ import annotations

import copy
import io
import re
from dataclasses import dataclass, field
from typing import Optional


def fold(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- editors: a document as paragraphs


@dataclass
class Plan:
    deletes: set[int] = field(default_factory=set)
    moves: list[int] = field(default_factory=list)  # paragraphs moved to the far end (or start)
    edits: list[tuple[int, int, int, str]] = field(default_factory=list)  # (unit, start, end, new text)
    insert_at: Optional[int] = None
    slide_moves: list[int] = field(default_factory=list)  # slides moved to the end (PPTX)

    def text_after(self, unit: int, text: str) -> str:
        """A paragraph's text once the plan's edits of it are made."""
        for _, start, end, new in sorted((e for e in self.edits if e[0] == unit), key=lambda e: -e[1]):
            text = text[:start] + new + text[end:]
        return text


class TextEditor:
    """Markdown and plain text: paragraphs between blank lines."""

    def __init__(self, data: bytes):
        self.blocks = re.split(r"\n\s*\n", data.decode("utf-8", "replace"))
        self.units = [b for b in self.blocks]
        self.pages = [None] * len(self.units)

    def apply(self, plan: Plan) -> bytes:
        blocks = list(self.blocks)
        for unit, start, end, new in sorted(plan.edits, key=lambda e: -e[1]):
            blocks[unit] = blocks[unit][:start] + new + blocks[unit][end:]
        order = [i for i in range(len(blocks)) if i not in plan.deletes and i not in plan.moves]
        if plan.insert_at is not None:
            order.insert(min(plan.insert_at, len(order)), -1)
        order += plan.moves
        return "\n\n".join(INSERTED if i == -1 else blocks[i] for i in order).encode("utf-8")


INSERTED = "An inserted paragraph about the amended forecast of the northern region, added in review."
_BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dd", "dt", "pre", "blockquote", "div"}


class HtmlEditor:
    def __init__(self, data: bytes):
        import lxml.html

        self.tree = lxml.html.fromstring(data)
        self.elements = [e for e in self.tree.iter() if isinstance(e.tag, str) and e.tag in _BLOCKS
                         and fold(e.text_content()) and not any(isinstance(d.tag, str) and d.tag in _BLOCKS
                                                                for d in e.iterdescendants())]
        self.units = [e.text_content() for e in self.elements]
        self.pages = [None] * len(self.units)
        self.in_table = [e.tag in ("td", "th", "li", "dd", "dt") for e in self.elements]  # edited, never moved

    def apply(self, plan: Plan) -> bytes:
        import lxml.html

        tree = copy.deepcopy(self.tree)
        index = {e: i for i, e in enumerate(self.elements)}
        elements = [None] * len(self.elements)
        for old, new in zip(self.tree.iter(), tree.iter()):
            if old in index:
                elements[index[old]] = new
        for unit, start, end, new in plan.edits:
            _replace_in_nodes(elements[unit], start, end, new)
        if plan.insert_at is not None:
            paragraph = lxml.html.Element("p")
            paragraph.text = INSERTED
            target = elements[min(plan.insert_at, len(elements) - 1)]
            if target.tag in ("td", "th", "li", "dd", "dt"):
                target = _outside_table(target)
            target.addprevious(paragraph)
        for unit in plan.moves:
            element = elements[unit]
            last = _outside_table(elements[-1])
            element.getparent().remove(element)
            element.tail = None
            last.addnext(element)
        for unit in plan.deletes:
            elements[unit].drop_tree()
        return lxml.html.tostring(tree, encoding="utf-8")


def _outside_table(element):
    while element.getparent() is not None and element.getparent().tag not in ("body", "div", "section", "article"):
        element = element.getparent()
    return element


def _replace_in_nodes(element, start: int, end: int, new: str) -> None:
    """Replace ``start..end`` of the element's text content, in the text node that holds it."""
    offset = 0
    for node, attr in _text_nodes(element, top=True):
        value = getattr(node, attr) or ""
        if offset <= start and end <= offset + len(value):
            setattr(node, attr, value[:start - offset] + new + value[end - offset:])
            return
        offset += len(value)


def _text_nodes(element, top=False):
    """(node, "text" | "tail") in the order text_content() joins them."""
    yield element, "text"
    for child in element:
        if isinstance(child.tag, str):
            yield from _text_nodes(child)
        else:
            yield child, "tail"  # a comment's text is no content; its tail is
    if not top:
        yield element, "tail"


class DocxEditor:
    def __init__(self, data: bytes):
        import docx

        self.data = data
        self.document = docx.Document(io.BytesIO(data))
        self.paragraphs = [p for p in _docx_paragraphs(self.document) if fold(p.text)]
        self.units = [p.text for p in self.paragraphs]
        self.pages = [None] * len(self.units)
        self.in_table = [p._p.getparent().tag.endswith("}tc") for p in self.paragraphs]

    def apply(self, plan: Plan) -> bytes:
        import docx

        document = docx.Document(io.BytesIO(self.data))
        paragraphs = [p for p in _docx_paragraphs(document) if fold(p.text)]
        for unit, start, end, new in plan.edits:
            edit_runs(paragraphs[unit].runs, start, end, new)
        if plan.insert_at is not None:
            paragraphs[min(plan.insert_at, len(paragraphs) - 1)].insert_paragraph_before(INSERTED)
        body = document.element.body
        for unit in plan.moves:
            element = paragraphs[unit]._p
            element.getparent().remove(element)
            sections = body.findall("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}sectPr")
            (sections[-1].addprevious if sections else body.append)(element)
        for unit in plan.deletes:
            element = paragraphs[unit]._p
            element.getparent().remove(element)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def docx_pages(data: bytes) -> dict[str, int]:
    """A DOCX's paragraphs' page numbers (by their text) as the file marks them: the page breaks Word
    rendered (w:lastRenderedPageBreak) and those typed (w:br w:type="page") before each paragraph. The
    oracle of a page in a DOCX decoded without a rendering (the file's own marks, not kg-decoder's)."""
    import docx

    body = docx.Document(io.BytesIO(data)).element.body
    page, pages = 1, {}
    for paragraph in body.iter(_W + "p"):
        text = "".join(t.text or "" for t in paragraph.iter(_W + "t"))
        breaks = [e for e in paragraph.iter() if e.tag == _W + "lastRenderedPageBreak"
                  or (e.tag == _W + "br" and e.get(_W + "type") == "page")]
        starts_with_break = bool(breaks) and not "".join(
            t.text or "" for t in paragraph.iter(_W + "t") if _before(t, breaks[0]))
        if starts_with_break:
            page += 1
            breaks = breaks[1:]
        pages.setdefault(fold(text), page)
        page += len(breaks)
    return pages


def _before(node, other) -> bool:
    for element in other.getroottree().getroot().iter():
        if element is node:
            return True
        if element is other:
            return False
    return False


def edit_runs(runs, start: int, end: int, new: str) -> bool:
    """Replace ``start..end`` of the runs' joined text, when one run holds it all."""
    offset = 0
    for run in runs:
        text = run.text
        if offset <= start and end <= offset + len(text):
            run.text = text[:start - offset] + new + text[end - offset:]
            return True
        offset += len(text)
    return False


def _docx_paragraphs(document):
    yield from document.paragraphs
    for table in document.tables:
        for row in table.rows:
            seen = set()
            for cell in row.cells:
                if id(cell._tc) in seen:
                    continue
                seen.add(id(cell._tc))
                yield from cell.paragraphs


class PptxEditor:
    def __init__(self, data: bytes):
        import pptx

        self.data = data
        presentation = pptx.Presentation(io.BytesIO(data))
        self.units, self.pages, self.slides = [], [], len(presentation.slides)
        self.in_table = []  # paragraphs never deleted or moved: the only one of their frame
        for number, slide in enumerate(presentation.slides, start=1):
            for paragraph, alone in _pptx_paragraphs(slide):
                self.units.append(paragraph.text)
                self.pages.append(number)
                self.in_table.append(alone)

    def apply(self, plan: Plan) -> bytes:
        import pptx

        presentation = pptx.Presentation(io.BytesIO(self.data))
        paragraphs = [p for slide in presentation.slides for p, _ in _pptx_paragraphs(slide)]
        for unit, start, end, new in plan.edits:
            edit_runs(paragraphs[unit].runs, start, end, new)
        for unit in plan.deletes:
            paragraphs[unit]._p.getparent().remove(paragraphs[unit]._p)
        ids = presentation.slides._sldIdLst
        for slide in plan.slide_moves:
            entry = list(ids)[slide - 1]
            ids.remove(entry)
            ids.append(entry)
        out = io.BytesIO()
        presentation.save(out)
        return out.getvalue()

    def new_page(self, plan: Plan, page: int) -> int:
        order = [s for s in range(1, self.slides + 1) if s not in plan.slide_moves] + plan.slide_moves
        return order.index(page) + 1


def _pptx_paragraphs(slide):
    """(paragraph, alone in its frame) of the slide's text frames."""
    for shape in slide.shapes:
        if shape.has_text_frame:
            with_text = [p for p in shape.text_frame.paragraphs if fold(p.text)]
            for paragraph in with_text:
                yield paragraph, len(with_text) < 2


# ---------------------------------------------------------------- a paragraph that runs over pages


SENTENCE_END = re.compile(r"(?<=[^\s.]{2}[.!?])\s+(?=[A-ZÀ-ÖØ-Þ¿¡\"“(])")


def sentences_of(text: str) -> list[str]:
    """A paragraph's sentences (a full stop, question or exclamation mark, then a capital)."""
    return [s for s in SENTENCE_END.split(fold(text)) if s]


class SpanningEditor:
    """A document whose one long paragraph (real sentences of a corpus document) runs over its pages
    2 to 4: a few short paragraphs on page 1, a page break, the long paragraph, a closing paragraph.
    Its units are the long paragraph's sentences: an edit plan edits words inside them and deletes
    them (bench/revisions.py). Written as DOCX (python-docx: LibreOffice renders it, kg-decoder's
    default decode too) and as a text PDF (reportlab: the paragraph split over the page breaks)."""

    def __init__(self, intro: list[str], sentences: list[str], closing: str):
        self.intro, self.units, self.closing = intro, sentences, closing
        self.pages = [None] * len(sentences)

    def paragraph(self, plan: Plan) -> str:
        return " ".join(plan.text_after(unit, text) for unit, text in enumerate(self.units)
                        if unit not in plan.deletes)

    def docx(self, plan: Plan, breaks: tuple[int, ...] = ()) -> bytes:
        """The DOCX; ``breaks``: where in the long paragraph's text a rendered page begins, marked there as
        Word marks the layout it saved (``w:lastRenderedPageBreak``: a reader such as unstructured cuts the
        paragraph into a piece per page there)."""
        import docx
        from docx.oxml import OxmlElement

        document = docx.Document()
        for text in self.intro:
            document.add_paragraph(text)
        document.add_page_break()
        text, paragraph = self.paragraph(plan), document.add_paragraph()
        for start, end in zip((0, *breaks), (*breaks, len(text))):
            run = paragraph.add_run(text[start:end])
            if start:
                run._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
        document.add_paragraph(self.closing)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    def pdf(self, plan: Plan) -> bytes:
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.styles import ParagraphStyle
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont
        from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

        if "DejaVuSans" not in pdfmetrics.getRegisteredFontNames():  # every letter of the text, not WinAnsi's only
            pdfmetrics.registerFont(TTFont("DejaVuSans", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
        style = ParagraphStyle("body", fontName="DejaVuSans", fontSize=11, leading=15, spaceAfter=8)

        def flowable(text: str):
            return Paragraph(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"), style)

        out = io.BytesIO()
        SimpleDocTemplate(out, pagesize=A4).build([*map(flowable, self.intro), PageBreak(),
                                                   flowable(self.paragraph(plan)), flowable(self.closing)])
        return out.getvalue()


__all__ = ['DocxEditor', 'HtmlEditor', 'INSERTED', 'Plan', 'PptxEditor', 'SpanningEditor', 'TextEditor', 'docx_pages',
           'fold', 'sentences_of']

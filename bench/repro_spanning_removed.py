"""Issue 54 item 3, reduced: a one-word edit judged "removed" when the quote's sentence, in version 2,
runs over a page break (a paragraph that spans pages: one element per page piece).

A text PDF (reportlab) of one long paragraph (real sentences of the corpus) over pages 1-3. Version 2 deletes the paragraph's first
sentence (the text flows up by a line or two) and changes one word inside the quoted sentence, which
lay whole on page 2 and now begins at the foot of page 1, about half its words on each page. Expected: changed. Got: removed. The same
sentence left unedited (an exact quote now split over the two pages' elements) is printed too.

    /work/main/.venv/bin/python bench/repro_spanning_removed.py
"""

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pypdfium2  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.styles import getSampleStyleSheet  # noqa: E402
from reportlab.platypus import Paragraph, SimpleDocTemplate  # noqa: E402

import kg_decoder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from revisions import spanning_editors  # noqa: E402

# Real sentences (the corpus's short documents, as the bench's spanning pairs take them); repeated
# made-up sentences would let a neighbour pass for the edited quote.
SENTENCES = spanning_editors(8)[-1][1].units


def pdf(sentences: list[str]) -> bytes:
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4).build([Paragraph(" ".join(sentences), getSampleStyleSheet()["BodyText"])])
    return out.getvalue()


def pages(data: bytes) -> list[str]:
    document = pypdfium2.PdfDocument(data)
    return [" ".join(document[n].get_textpage().get_text_range().split()) for n in range(len(document))]


def on_one_page(data: bytes, sentence: str) -> bool:
    return any(sentence in page for page in pages(data))


def verdict(v1: bytes, v2: bytes, quote: str) -> str:
    with kg_decoder.open_store(None) as store:
        first = kg_decoder.decode(v1, store=store, source_id="s", file_name="s.pdf")
        kg_decoder.chunk_document(first.document, store=store)
        holder = [c for c in kg_decoder.document_chunks(first.document, store=store) if quote in " ".join(c.text.split())]
        fact = ("http://example.org/f", "http://example.org/says", quote)
        kg_decoder.add_facts(holder[0].iri, [fact], spans=[{"quote": quote}], store=store)
        kg_decoder.decode(v2, store=store, source_id="s", file_name="s.pdf")
        [source] = kg_decoder.trace(fact=fact, store=store)
        step = source.verdicts[-1]
        return f"{step.verdict} page {step.previous_page_number} -> {step.page_number}"


def split_share(data: bytes, sentence: str) -> float:
    """The share of the sentence's words on the first page it begins on (1: whole on one page)."""
    words = sentence.split()
    for page in pages(data):
        for n in range(len(words), 0, -1):
            if page.endswith(" ".join(words[:n])) or " ".join(words) in page:
                return n / len(words) if n < len(words) else 1.0
    return 1.0


def main() -> int:
    v1 = pdf(SENTENCES)
    # A sentence whole on page 2 of version 1 that runs over the page break, about half on each page, once
    # the paragraph's first sentences are deleted (the text flows up).
    found = None
    for deleted in range(1, 4):
        for k, sentence in enumerate(SENTENCES):
            if sentence in pages(v1)[1] and 0.35 <= split_share(pdf(SENTENCES[deleted:]), sentence) <= 0.65:
                found = deleted, k
                break
        if found:
            break
    if not found:
        print("no sentence crosses the page break: change the text")
        return 1
    deleted, k = found
    quote = SENTENCES[k].rstrip(".")
    edited = list(SENTENCES)
    word = [w for w in quote.split() if w.isalpha() and len(w) >= 4][1]
    edited[k] = edited[k].replace(word, "amended", 1)  # one word inside the quote
    print(f"quote (sentence {k}, whole on page 2 of version 1): {quote!r}")
    print(f"version 2: the first {deleted} sentence(s) deleted, {word!r} -> 'amended' in the quote; the share of "
          f"its words on page 1: {split_share(pdf(edited[deleted:]), edited[k]):.2f}")
    print("  one word edited:", verdict(v1, pdf(edited[deleted:]), quote), "(expected: changed)")
    print("  not edited     :", verdict(v1, pdf(SENTENCES[deleted:]), quote), "(expected: moved or current, not removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The picture of a trace in the README (docs/trace.png): a corpus PDF decoded and chunked into a
store in a temporary folder, a fact added on a quote of its first chunk, the app served on loopback
and the fact's trace page taken by the headless Chromium the browser tests use.

    .venv/bin/python scripts/docs_screenshot.py [--corpus ../shared/corpus] [--out docs/trace.png]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

import kg_decoder  # noqa: E402
from PIL import Image  # noqa: E402
from browser import headless_chromium  # noqa: E402
from kg_decoder.cli import load_web_app  # noqa: E402

EX = "http://example.org/"
QUOTE = "LayoutParser, an open-source library for streamlining the usage of DL in DIA research"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "trace.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2000)
    args = parser.parse_args()
    from waitress.server import create_server

    with tempfile.TemporaryDirectory() as folder:
        store = kg_decoder.open_store(Path(folder) / "store")
        result = kg_decoder.decode(args.corpus / "layout-parser-paper-fast.pdf", store=store)
        kg_decoder.chunk_document(result.document, store=store)
        chunk = next(c for c in kg_decoder.document_chunks(result.document, store=store) if QUOTE in c.text)
        fact = (EX + "LayoutParser", EX + "isA", "open-source library")
        kg_decoder.add_facts(chunk.iri, [fact], spans=[{"quote": QUOTE}], store=store, extractor="example")
        store.flush()
        server = create_server(load_web_app().create_app(store, workers=1), host="127.0.0.1", port=0, threads=4)
        threading.Thread(target=server.run, daemon=True).start()
        browser = headless_chromium()
        try:
            browser.set_window_size(args.width, args.height)
            query = urlencode({"s": fact[0], "p": fact[1], "o": fact[2], "object": "literal"})
            browser.get(f"http://127.0.0.1:{server.effective_port}/trace?{query}")
            for _ in range(100):  # the page's picture drawn and the boxes placed over it
                if browser.find_elements("css selector", ".box.characters"):
                    break
                time.sleep(0.1)
            time.sleep(1)
            # down to a little below the last box of the quoted words
            bottom = browser.execute_script(
                "return Math.max(...[...document.querySelectorAll('.box.characters')]"
                ".map(b => b.getBoundingClientRect().bottom + window.scrollY));")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            picture = Image.open(io.BytesIO(browser.get_screenshot_as_png()))
            picture = picture.crop((0, 0, picture.width, min(picture.height, int(bottom) + 120)))
            picture.convert("RGB").quantize(colors=128).save(args.out, optimize=True)
        finally:
            browser.quit()
            server.close()
            store.close()
    print(f"{args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()

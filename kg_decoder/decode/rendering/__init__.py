"""A document's pages as drawn: a LibreOffice rendering's pages read (``pages.py``), the elements of
formats that state no positions placed on it (``positions.py``), and every element's box checked by a
second reading of its page (``box_checks.py``: PDFium's text layer or the rendering)."""

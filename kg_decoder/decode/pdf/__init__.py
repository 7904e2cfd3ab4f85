"""PDF: the backend (``backend.py``: unstructured's ``fast`` reading, PDFium's text layer, pictures,
tables, forms, OCR of pages without a text layer) and what it reads a PDF with: the page geometry,
PDFium's characters (``pdfium_chars``, a C reader beside it), the text layer's lines, fonts, forms,
decryption, the texts' types read ahead for unstructured, reading order, pages read by tesseract.
The registry (``decode/backends/``) is what other stages ask; nothing here is imported above decode."""

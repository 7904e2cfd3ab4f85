"""Citing what was decoded: chunks with citation anchors, facts tied to their chunk and span,
trace-back to the page and its boxes, Web Annotation, and a document's images read back."""

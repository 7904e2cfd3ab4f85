"""Office documents: the LibreOffice-based backend (``backend.py``: conversions, renderings, the
package cleaned of external references), the OOXML backend (``ooxml.py``, with the parts unstructured
leaves out: ``docx_parts``, ``slide_parts``, ``ooxml_package``, ``ooxml_graphics``) and DOC/PPT converted
to them (``legacy.py``). The registry (``decode/backends/``) is what other stages ask."""

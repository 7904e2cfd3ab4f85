"""Tables: a table's HTML as a matrix of cells (``matrix.py``, pure, for every format), tables found on
PDF pages (``pdf_pages.py`` over ``finder.py``: ``page_marks``, ``regions``, ``structure``) and on
scanned pages (``scanned.py``), and the cells of Office tables placed on the page (``office_cells.py``)."""

"""Decoding: bytes to a written document. Format detection and one backend per format family
(partition, pages, pictures, embedded files, page drawing), the worker process that runs the CPU
work, grouping into pages and sections, text assembly, table matrices, the parse cache, and the
pipeline that writes the result in one transaction."""

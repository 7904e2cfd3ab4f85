"""kg-decoder's chunks in the frameworks people build with: LangChain (``integrations.langchain``, the
``langchain`` extra) and LlamaIndex (``integrations.llamaindex``, the ``llamaindex`` extra). Each
gives a store's chunks as the framework's documents with the conventional metadata (``source``,
``page``; LlamaIndex's ``start_char_idx``/``end_char_idx``) plus ``chunk_iri``, ``document_iri`` and
``boxes``, and traces such a document, or a quote in an answer, back to verified boxes
(:mod:`kg_decoder.integrations.chunks`, which imports neither framework). Only this package imports
them (an import contract says so)."""

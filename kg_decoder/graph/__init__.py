"""The graph: the vocabulary and IRIs, the RDF mapping of model records, the store (Oxigraph and the
library of bytes beside it), typed reads and writes. The only stage that knows SPARQL text, query
rows, the ``tg:`` vocabulary and Oxigraph."""

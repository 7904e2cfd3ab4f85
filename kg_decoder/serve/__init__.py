"""What a web app over a store needs beyond the public API: the SPARQL protocol, page pictures,
upload jobs and the views its pages and JSON show. The Flask app in ``web/`` uses these and the
names of ``kg_decoder`` only."""

from .jobs import Jobs, JobState, JobStatus
from .pages import page_image, rendered_page_image
from .sparql import Answer, run_query
from .views import (BoxView, DocumentView, ElementView, QueryExample, StoreOverview, TraceView, decoded_json,
                    document_iri, document_view, form_options, query_examples, store_overview, trace_view)

__all__ = ["Answer", "BoxView", "DocumentView", "ElementView", "JobState", "JobStatus", "Jobs", "QueryExample",
           "StoreOverview", "TraceView", "decoded_json", "document_iri", "document_view", "form_options",
           "page_image", "query_examples", "rendered_page_image", "run_query", "store_overview", "trace_view"]

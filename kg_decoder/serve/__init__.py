"""What a web app over a store needs beyond the public API: the SPARQL protocol, the workers that
run untrusted work, bounded traces and page pictures, upload jobs and the views its pages and JSON
show. The Flask app in ``kg_decoder/web/`` uses these and the names of ``kg_decoder`` only."""

from ..graph.sparql_guard import allowed_endpoints
from ..model.errors import RequestCancelled
from .bounded import (Bounds, bounded_page_image, bounded_read, bounded_rendered_page_image, bounded_search,
                      bounded_trace)
from .dashboard import Chart, audit_rows, dashboard
from .jobs import Jobs, JobState, JobStatus
from .page_reads import PAGE_ROWS, AuditPage, DocumentPage, Listed
from .pages import page_image, rendered_page_image
from .sparql import Answer, run_query, run_update
from .views import (BoxView, DocumentView, ElementView, FactView, QueryExample, StoreOverview, TraceView,
                    decoded_json, document_facts, document_iri, document_view, fact_object, fact_trace_url,
                    form_options, query_examples, store_overview, trace_drawing, trace_view)
from .version_views import diff_view, document_source_versions, verdict_chain_views
from .workers import WorkerPool, spread_workers, worker_pool
from .writes import WriteLock

__all__ = ["PAGE_ROWS", "Answer", "AuditPage", "Bounds", "BoxView", "Chart", "DocumentPage", "DocumentView",
           "ElementView", "FactView", "JobState", "JobStatus", "Jobs", "Listed", "QueryExample", "RequestCancelled",
           "StoreOverview", "TraceView", "WorkerPool", "WriteLock", "allowed_endpoints", "audit_rows", "bounded_page_image",
           "bounded_read", "bounded_rendered_page_image", "bounded_search", "bounded_trace",
           "dashboard", "decoded_json", "diff_view", "document_facts", "document_iri", "document_source_versions",
           "document_view", "fact_object",
           "fact_trace_url", "form_options", "page_image", "query_examples", "rendered_page_image", "run_query",
           "run_update", "spread_workers", "store_overview", "trace_drawing", "trace_view", "verdict_chain_views", "worker_pool"]

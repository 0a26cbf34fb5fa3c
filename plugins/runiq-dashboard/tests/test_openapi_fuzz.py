"""Property-based fuzzing (schemathesis) of the generated OpenAPI document against a real server."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from runiq.hosting import HostBuilder
from runiq.rag import RagDocument, add_runiq_rag
from runiq_dashboard import DashboardOptions, create_dashboard_app


def _openapi_document() -> dict[str, Any]:
    """The same document the server serves; building a host does no I/O."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "fuzz",
            lambda index: (
                index.use_documents([RagDocument(document_id="d", content="x")])
                .use_in_memory_vector_store()
                .use_default_mode("lexical")
            ),
        ),
    )
    document: dict[str, Any] = create_dashboard_app(builder.build()).openapi()
    return document


schema = schemathesis.openapi.from_dict(_openapi_document())


@pytest.fixture
def querying_server(server_factory):  # type: ignore[no-untyped-def]
    """A live server with querying on (loopback clients hold every role) and no practical rate limit."""
    server = server_factory(DashboardOptions(enable_query=True, query_rate_limit=100_000)).start()
    yield server
    server.stop()


@schema.parametrize()
# The live server answers in its own thread while Hypothesis draws the next case; anything in the request
# path that touches the global `random` state then looks to Hypothesis like a strategy using it (seen
# once under a loaded CI run). Those draws are not the strategy's, so that deprecation is not an error here.
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
# One live server per operation serves every example of it: function-scoped on purpose.
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_input_produces_a_server_error(case, querying_server) -> None:  # type: ignore[no-untyped-def]
    """Whatever the index name, run id, limit or query body, the dashboard never answers 5xx."""
    case.call_and_validate(base_url=querying_server.url.split("/runiq/")[0], checks=[not_a_server_error])

"""Property-based run of the API against its own OpenAPI schema: no server error, conformant, on
SQLite and (fewer examples, to keep the suite's time) on PostgreSQL."""

import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from api.main import create_app
from autotuner.settings import settings as app_settings
from tests.conftest import postgres_database, requires_postgres
from tests.dashboard_seed import seed

# schemathesis.pytest.from_fixture fails on pytest 9 (it reads Function._nodeid): the app is made
# at import, over a database in a folder removed when the process ends.
_folder = tempfile.TemporaryDirectory(prefix="autotune-schema-")
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(seed(f"sqlite:///{Path(_folder.name) / 'dashboard.db'}").url)
)
#: Examples per operation on PostgreSQL: the same operations, a smaller run.
POSTGRES_EXAMPLES = 8


@pytest.fixture(scope="module", autouse=True)
def secret_token():
    """Writing on, with a token the generated requests cannot know: every import answers 401."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOTUNE_API_TOKEN", "not-guessable-0f9c2e")
        app_settings.cache_clear()
        yield
    app_settings.cache_clear()


@pytest.fixture(scope="module")
def postgres_app():
    """The same service over the same seeded rows in a PostgreSQL database of its own."""
    with postgres_database() as url:
        app = create_app(seed(url).url)
        yield app
        app.state.db.engine.dispose()


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    case.call_and_validate()


@requires_postgres
@schema.parametrize()
@settings(max_examples=POSTGRES_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema_on_postgresql(case, postgres_app):
    case.call_and_validate(app=postgres_app)


def test_accuracy_is_in_the_schema_with_its_filters():
    """The run above covers every operation of the schema: verify's verdicts among them."""
    operation = schema.raw_schema["paths"]["/api/accuracy"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert names == {"op", "soc", "case", "passed", "latest", "limit", "offset"}

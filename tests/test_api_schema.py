"""Property-based run of the API against its own OpenAPI schema: no server error, conformant."""

import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from api.main import create_app
from autotuner.settings import settings as app_settings
from tests.dashboard_seed import seed

# schemathesis.pytest.from_fixture fails on pytest 9 (it reads Function._nodeid): the app is made
# at import, over a database in a folder removed when the process ends.
_folder = tempfile.TemporaryDirectory(prefix="autotune-schema-")
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(seed(Path(_folder.name)).url))


@pytest.fixture(scope="module", autouse=True)
def secret_token():
    """Writing on, with a token the generated requests cannot know: every import answers 401."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOTUNE_API_TOKEN", "not-guessable-0f9c2e")
        app_settings.cache_clear()
        yield
    app_settings.cache_clear()


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    case.call_and_validate()


def test_accuracy_is_in_the_schema_with_its_filters():
    """The run above covers every operation of the schema: verify's verdicts among them."""
    operation = schema.raw_schema["paths"]["/api/accuracy"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert names == {"op", "soc", "case", "passed", "latest", "limit", "offset"}

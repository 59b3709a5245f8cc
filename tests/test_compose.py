"""docker-compose.yml is valid Compose and wires the database, the API and the workers."""

import shutil
import subprocess

import pytest
import yaml

from .conftest import ROOT


def compose_command() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        return ["docker", "compose"]
    return None


@pytest.mark.skipif(
    compose_command() is None, reason="neither docker-compose nor docker is installed"
)
def test_compose_file_validates_and_wires_the_services():
    result = subprocess.run(
        [*compose_command(), "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "AUTOTUNE_SOC": "H200"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    services = config["services"]
    assert set(services) == {"db", "api", "worker"}
    assert "autotune-db" in config["volumes"]
    assert any("autotune-db" in str(v) for v in services["db"]["volumes"])
    url = "postgresql+psycopg://autotune:autotune@db:5432/autotune"
    assert services["api"]["environment"]["AUTOTUNE_DB"] == url
    assert services["worker"]["environment"]["AUTOTUNE_DB"] == url
    assert services["worker"]["environment"]["AUTOTUNE_SOC"] == "H200"  # from the environment
    assert "autotune run" in " ".join(services["worker"]["command"])
    assert "serve" in services["api"]["command"]

"""docker-compose.yml is valid Compose and wires the database, the API and the workers."""

import shutil
import subprocess

import pytest
import yaml

from .conftest import ROOT

#: The environment Compose runs in: no AUTOTUNE_ or POSTGRES_ variable of this shell leaks in.
ENV = {"PATH": "/usr/bin:/bin", "AUTOTUNE_SOC": "H200"}


def compose_command() -> list[str] | None:
    """`docker-compose`, else the `docker compose` plugin, by full path, where it answers."""
    candidates = [[shutil.which("docker-compose")], [shutil.which("docker"), "compose"]]
    for command in candidates:
        if command[0] is None:
            continue
        probe = subprocess.run([*command, "version"], capture_output=True, env=ENV, check=False)
        if probe.returncode == 0:
            return command
    return None


COMPOSE = compose_command()


@pytest.mark.skipif(
    COMPOSE is None, reason="neither docker-compose nor the docker compose plugin runs here"
)
def test_compose_file_validates_and_wires_the_services():
    result = subprocess.run(
        [*COMPOSE, "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        env=ENV,
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

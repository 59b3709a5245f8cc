"""`autotune reference-server`: upstream's outputs of cases, run on this machine's device, for
`autotune verify --references URL` on another machine."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import DeviceOption, console, quiet_interpreter


def reference_server(
    soc: DeviceOption,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8765,
) -> None:
    """Serve upstream's outputs of a case (built-in, or a user case's shape, offsets and dtype);
    AUTOTUNE_REFERENCE_TOKEN, where set, is required from clients."""
    import uvicorn

    from autotuner.backends import get_backend
    from autotuner.references.server import create_app
    from autotuner.settings import settings

    backend = get_backend(soc)
    quiet_interpreter()
    guarded = "a bearer token required" if settings().reference_token else "no token required"
    console.print(
        f"reference server: upstream on {backend.describe()} at http://{host}:{port} ({guarded})",
        markup=False,
        highlight=False,
    )
    uvicorn.run(create_app(backend), host=host, port=port, log_level="warning")

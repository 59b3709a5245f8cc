"""The service's routers: JSON under /api, HTML pages, and plotly's script."""

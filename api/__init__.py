"""The dashboard service: a read-only JSON API and server-rendered HTML pages over the database."""

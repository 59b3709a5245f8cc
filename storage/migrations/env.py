"""Alembic environment: run with the connection `storage.db.open_database` hands over."""

from alembic import context

from storage.db import VERSION_TABLE
from storage.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # the alembic command line: connect from the URL in the config
    import sqlalchemy as sa

    engine = sa.create_engine(context.config.get_main_option("sqlalchemy.url"))
    connection = engine.connect()

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()

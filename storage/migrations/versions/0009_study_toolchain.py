"""studies record the toolchain they ran under

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 18:40:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("autotune_studies") as batch:
        batch.add_column(sa.Column("toolchain", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("autotune_studies") as batch:
        batch.drop_column("toolchain")

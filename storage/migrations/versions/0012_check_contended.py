"""checks record their outcome (ok, regressed, contended) and why the device looked shared

Revision ID: 0012_check_contended
Revises: 0011
Create Date: 2026-12-01 15:30:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_check_contended"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("autotune_checks") as batch:
        batch.add_column(sa.Column("outcome", sa.String(16), nullable=False, server_default="ok"))
        batch.add_column(sa.Column("contention", sa.String(512), nullable=True))
    op.execute("UPDATE autotune_checks SET outcome = 'regressed' WHERE regressed")


def downgrade() -> None:
    with op.batch_alter_table("autotune_checks") as batch:
        batch.drop_column("contention")
        batch.drop_column("outcome")

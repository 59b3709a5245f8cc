"""accuracy verdicts say where upstream's outputs came from when another machine made them

Revision ID: 0013_accuracy_reference_from
Revises: 0012_check_contended
Create Date: 2026-12-04 17:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_accuracy_reference_from"
down_revision = "0012_check_contended"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("autotune_accuracy") as batch:
        batch.add_column(sa.Column("reference_from", sa.String(256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("autotune_accuracy") as batch:
        batch.drop_column("reference_from")

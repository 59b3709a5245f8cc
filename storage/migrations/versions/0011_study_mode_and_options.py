"""studies record their NPU mode and compiler options as columns

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 14:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("autotune_studies") as batch:
        batch.add_column(
            sa.Column("npu_mode", sa.String(32), nullable=False, server_default="simd")
        )
        batch.add_column(sa.Column("npu_options", sa.JSON(), nullable=True))
    # Before these columns a SIMT study said so only by its name (`.../simt/tc-...`).
    op.execute("UPDATE autotune_studies SET npu_mode = 'simt' WHERE name LIKE '%/simt%'")


def downgrade() -> None:
    with op.batch_alter_table("autotune_studies") as batch:
        batch.drop_column("npu_options")
        batch.drop_column("npu_mode")

"""user cases

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 18:20:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "autotune_user_cases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("op", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("entry", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("op", "name", name="uq_user_case_name"),
    )
    with op.batch_alter_table("autotune_user_cases", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_autotune_user_cases_op"), ["op"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("autotune_user_cases", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_autotune_user_cases_op"))
    op.drop_table("autotune_user_cases")

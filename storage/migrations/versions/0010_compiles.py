"""compile verdicts of configs, kept by what the compiled code depends on

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 12:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "autotune_compiles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(64), nullable=False, unique=True),
        sa.Column("op", sa.String(128), nullable=False, index=True),
        sa.Column("kernel", sa.String(128), nullable=False),
        sa.Column("soc", sa.String(64), nullable=False, index=True),
        sa.Column("case_name", sa.String(256), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("category", sa.String(32), nullable=False),
        sa.Column("message", sa.String(1000), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("required_bits", sa.Integer(), nullable=True),
        sa.Column("available_bits", sa.Integer(), nullable=True),
        sa.Column("multibuffer_dropped", sa.Boolean(), nullable=False),
        sa.Column("memory", sa.JSON(), nullable=False),
        sa.Column("compiler", sa.String(300), nullable=False),
        sa.Column("compiled_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("autotune_compiles")

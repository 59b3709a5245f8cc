"""accuracy results of verify, and measured device ceilings

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 18:30:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "autotune_accuracy",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("op", sa.String(length=128), nullable=False),
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("case_name", sa.String(length=256), nullable=False),
        sa.Column("case", sa.JSON(), nullable=False),
        sa.Column("output", sa.String(length=128), nullable=False),
        sa.Column("configs", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("reference", sa.String(length=32), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=1000), nullable=False),
        sa.Column("toolchain", sa.JSON(), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_autotune_accuracy_op", "autotune_accuracy", ["op"])
    op.create_index("ix_autotune_accuracy_soc", "autotune_accuracy", ["soc"])
    op.create_index(
        "ix_autotune_accuracy_newest",
        "autotune_accuracy",
        ["op", "soc", "case_name", "output", "verified_at", "id"],
    )
    op.create_index("ix_autotune_accuracy_verified_at", "autotune_accuracy", ["verified_at"])
    op.create_table(
        "autotune_ceilings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("bandwidth", sa.Float(), nullable=False),
        sa.Column("flops", sa.JSON(), nullable=False),
        sa.Column("environment", sa.JSON(), nullable=False),
        sa.Column("measured_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_autotune_ceilings_soc", "autotune_ceilings", ["soc"])


def downgrade() -> None:
    op.drop_index("ix_autotune_ceilings_soc", table_name="autotune_ceilings")
    op.drop_table("autotune_ceilings")
    for name in ("verified_at", "newest", "soc", "op"):
        op.drop_index(f"ix_autotune_accuracy_{name}", table_name="autotune_accuracy")
    op.drop_table("autotune_accuracy")

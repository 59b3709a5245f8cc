"""indexes for the dashboard's newest-row queries

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 07:00:00.000000
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The newest baseline of each (op, soc, case, part, source), the newest check of each
    # (op, soc, case, part), and the baselines listed newest first, without sorting the tables.
    op.create_index(
        "ix_autotune_baselines_newest",
        "autotune_baselines",
        ["op", "soc", "case_name", "part", "source", "measured_at", "id"],
    )
    op.create_index("ix_autotune_baselines_measured_at", "autotune_baselines", ["measured_at"])
    op.create_index(
        "ix_autotune_checks_newest",
        "autotune_checks",
        ["op", "soc", "case_name", "part", "checked_at", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_autotune_checks_newest", table_name="autotune_checks")
    op.drop_index("ix_autotune_baselines_measured_at", table_name="autotune_baselines")
    op.drop_index("ix_autotune_baselines_newest", table_name="autotune_baselines")

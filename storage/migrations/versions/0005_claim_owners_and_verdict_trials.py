"""claims and runs record their owning process; a study records its verdict's trial count

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 18:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("autotune_claims") as batch:
        batch.add_column(sa.Column("host", sa.String(256), nullable=True))
        batch.add_column(sa.Column("pid", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pid_started", sa.Float(), nullable=True))
        batch.add_column(sa.Column("run_id", sa.Integer(), nullable=True))
    with op.batch_alter_table("autotune_studies") as batch:
        batch.add_column(sa.Column("verdict_trials", sa.Integer(), nullable=True))
    with op.batch_alter_table("autotune_runs") as batch:
        batch.add_column(sa.Column("host", sa.String(256), nullable=True))
        batch.add_column(sa.Column("pid", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pid_started", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("autotune_runs") as batch:
        batch.drop_column("pid_started")
        batch.drop_column("pid")
        batch.drop_column("host")
    with op.batch_alter_table("autotune_studies") as batch:
        batch.drop_column("verdict_trials")
    with op.batch_alter_table("autotune_claims") as batch:
        batch.drop_column("run_id")
        batch.drop_column("pid_started")
        batch.drop_column("pid")
        batch.drop_column("host")

"""baselines record the backend that measured them (the GPU baseline is a cuda row); checks
record the reference re-measured beside the frozen port

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 18:10:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

#: The Ascend socs of this revision (autotuner.backends.socs.NPU_SOCS); unknown Ascend names
#: start so.
NPU_SOCS = ("950PR", "950DT", "910B", "910_93")


def upgrade() -> None:
    with op.batch_alter_table("autotune_baselines") as batch:
        batch.add_column(sa.Column("backend", sa.String(16), nullable=False, server_default="cuda"))
    baselines = sa.table(
        "autotune_baselines",
        sa.column("backend", sa.String),
        sa.column("soc", sa.String),
        sa.column("interpreter", sa.Boolean),
    )
    npu = sa.or_(baselines.c.soc.in_(NPU_SOCS), baselines.c.soc.like("Ascend%"))
    op.execute(baselines.update().where(npu).values(backend="npu"))
    op.execute(baselines.update().where(baselines.c.interpreter.is_(True)).values(backend="cpu"))
    with op.batch_alter_table("autotune_checks") as batch:
        batch.add_column(sa.Column("reference_source", sa.String(32), nullable=True))
        batch.add_column(sa.Column("reference_ms", sa.Float(), nullable=True))
        batch.add_column(sa.Column("absolute_change", sa.Float(), nullable=True))
        batch.add_column(sa.Column("rounds", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("autotune_checks") as batch:
        for column in ("rounds", "absolute_change", "reference_ms", "reference_source"):
            batch.drop_column(column)
    with op.batch_alter_table("autotune_baselines") as batch:
        batch.drop_column("backend")

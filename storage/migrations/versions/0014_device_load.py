"""baselines and checks record what the device showed of other work around them (calibration
probes, NVML's processes): device_load

Revision ID: 0014_device_load
Revises: 0013_accuracy_reference_from
Create Date: 2026-12-04 17:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_device_load"
down_revision = "0013_accuracy_reference_from"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("autotune_baselines", "autotune_checks"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("device_load", sa.JSON(), nullable=True))


def downgrade() -> None:
    for table in ("autotune_checks", "autotune_baselines"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("device_load")

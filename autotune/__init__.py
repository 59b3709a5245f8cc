"""`import autotune`: what a workload calls; `autotune.cli` is the `autotune` command (the engine
is `autotuner`).

    import autotune

    with autotune.capture("cases/my_model.yaml"):
        train_a_few_steps()

then `autotune run --op OP --soc SOC --cases-file cases/my_model.yaml` tunes what it ran.
"""

from autotuner.cases.capture import capture

__all__ = ["capture"]

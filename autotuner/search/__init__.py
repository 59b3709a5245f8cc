"""`autotune run`: one Optuna study per (kernel, case, soc). The space of a kernel (`space`), the
policy that proposes (`sampler`, `warm_starts`), the claim board (`claims`), the worker processes
and their pipeline (`workers`, `pipeline`, `trial`), the settlement (`settle`), the study
(`study`) and the command (`runner`)."""

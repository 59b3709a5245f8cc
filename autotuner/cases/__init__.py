"""User cases: an op's shapes with the user's lengths, kept in `cases/<op>.yaml` and the
database (`store`), asked for on the command line (`options`) or captured from a workload
(`capture`)."""

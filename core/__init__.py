"""The ground floor: what every layer above may use, importing nothing of the project's own.

`errors` (UserError), `paths` (where the project's files live), `files` (rewriting several of them
as one step), `modules` (loading a file as a module), `upstream` (FBGEMM's pinned Triton modules)
and `limits` (a device's hard limits, `DeviceLimits`). `ops` and `storage` stand on it;
`autotuner` and `api` above them.
"""

"""The ATK folder of an op: the port file's generated block, `<op>_performance.json`, the
layout check (`autotune lint`) and what the folder's own scripts import (`generate`, `compat`).

Reads and writes file formats only; every later stage reads the frozen configs through it.
"""

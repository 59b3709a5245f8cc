# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK case generator of hstu_attention: deterministic shapes, seeded values (no RNG-dependent shapes).

`cases()` lists the accuracy cases, `generate(name)` gives one case's inputs in the API's order;
`python generate_hstu_attention.py [accuracy|performance]` prints the case list as JSON.
"""

from autotuner.atk.generate import case_list, generate_inputs, main

OP = "hstu_attention"


def cases(kind="accuracy"):
    return case_list(OP, kind)


def generate(name, device="cpu", seed=0):
    return generate_inputs(OP, name, device, seed)


if __name__ == "__main__":
    main(OP)

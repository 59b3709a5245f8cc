# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK case generator of jagged_dense_flash_attention: deterministic shapes and jagged lengths (no RNG-dependent shapes).

`cases()` lists the accuracy cases, `generate(name)` gives one accuracy case's inputs in the API's order;
`python generate_jagged_dense_flash_attention.py [accuracy|performance]` prints the case list as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jagged_dense_flash_attention_support import cases, generate, main  # noqa: E402  (rendered beside this file)

__all__ = ["cases", "generate"]

if __name__ == "__main__":
    main()

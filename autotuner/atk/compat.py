"""ATK's API classes where ATK is installed, stand-ins where it is not.

ATK is Huawei's internal operator test tool; the `_api.py` files of the ATK folders must import
without it (the autotune runner does not need ATK), so they take `BaseApi` and `register` from here.
"""

from __future__ import annotations

try:
    from atk.configs.dataset_config import InputDataset
    from atk.tasks.api_execute import register
    from atk.tasks.api_execute.base_api import BaseApi

    ATK_AVAILABLE = True
except ImportError:
    ATK_AVAILABLE = False

    class InputDataset:  # type: ignore[no-redef]
        """What ATK hands an API: positional tensors in `args`, the rest in `kwargs`."""

        def __init__(self, args: list, kwargs: dict | None = None) -> None:
            self.args = args
            self.kwargs = kwargs or {}

    class BaseApi:  # type: ignore[no-redef]
        def __init__(self, dataset: InputDataset | None = None) -> None:
            self.dataset = dataset

    def register(name: str):  # type: ignore[no-redef]
        def keep(cls):
            cls.atk_name = name
            return cls

        return keep


__all__ = ["ATK_AVAILABLE", "BaseApi", "InputDataset", "register"]

"""mobile-actions: let a 270M FunctionGemma-style caller run a phone.

The public surface. Light imports only at import time: `validate`, `call` and `dispatch` must start
fast, and the on-device runtime must never pull in torch; `Caller`, `dispatch` and `Runner` load
their modules on first use.
"""
from __future__ import annotations

from typing import Any

from mobile_actions.calls import Problem, ToolCall, validate_call, validate_calls
from mobile_actions.catalog import Catalogue, Tool, load_catalogue
from mobile_actions.errors import (
    CatalogueError, DatasetError, DeviceError, DispatchError, MobileActionsError, ModelError, WireParseError,
)
from mobile_actions.wire import parse, render

_LAZY = {
    "Caller": ("mobile_actions.runtime", "Caller"),             # the torch-free on-device caller
    "dispatch": ("mobile_actions.android.dispatch", "dispatch"),  # run one validated call on a phone
    "Runner": ("mobile_actions.hybrid.runner", "Runner"),        # a request end to end: tools, GUI, trace
}

__all__ = [
    "Catalogue", "Tool", "load_catalogue", "Problem", "ToolCall", "validate_call", "validate_calls", "render",
    "parse", "Caller", "dispatch", "Runner", "MobileActionsError", "CatalogueError", "DatasetError",
    "DeviceError", "DispatchError", "ModelError", "WireParseError",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mobile_actions' has no attribute {name!r}")

"""mobile-actions: let a 270M FunctionGemma-style caller run a phone.

Light imports only here: `validate`, `call` and `dispatch` must start fast, and the
on-device runtime must never pull in torch.
"""
from mobile_actions.catalog import Catalogue, CatalogueError, Tool, load_catalogue
from mobile_actions.calls import Problem, ToolCall, validate_call, validate_calls

__all__ = [
    "Catalogue", "CatalogueError", "Tool", "load_catalogue",
    "Problem", "ToolCall", "validate_call", "validate_calls",
]
__version__ = "0.1.0"

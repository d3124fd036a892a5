"""Data shipped with the package: the bundled caller adapter lives in `caller-lora/` (see docs/caller.md)."""

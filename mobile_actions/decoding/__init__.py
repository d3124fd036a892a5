"""Helpers that narrow what the caller may write while decoding (e.g. datetime candidates)."""

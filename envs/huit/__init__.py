"""Huit américain (RULES.md part B)."""

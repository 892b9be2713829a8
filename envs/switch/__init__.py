"""Switch (RULES.md part A)."""

"""What agents read that is fitted from played hands: hand readers, match-equity tables, teach labels.

Each fitter runs from a config (`cardlab read-hands`, `cardlab match-equity`) on the harness.
"""

"""Rewrite machinery shared by the passes: index math and, later, memory and shuffle lowering."""

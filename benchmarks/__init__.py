"""Benchmarks and quality harnesses (not part of the runiq distribution)."""

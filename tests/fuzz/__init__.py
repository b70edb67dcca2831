"""Fuzzing of every decoder: targets, seeds and mutator (``targets``); long runs: ``python -m tests.fuzz``."""

"""Straightforward Python/numpy implementations of each method's selection step, shaped like
the methods' reference code (loops where it loops). They exist to be timed against tabret on
identical inputs and to check that both select the same tables; they are not part of tabret.
"""

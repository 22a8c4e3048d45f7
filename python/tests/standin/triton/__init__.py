"""A small stand-in for Triton 3.6, for tests on machines without Triton or a
GPU: the parts of `triton.runtime.autotuner` that tunelock's interception
touches (Config, Autotuner's attributes, run, pruning, hooks, cache),
written from Triton's source. Kernels are plain Python objects with `run`.
"""
from .runtime.autotuner import Autotuner, Config, autotune

__version__ = "3.6.0-standin"
__all__ = ["Autotuner", "Config", "autotune"]

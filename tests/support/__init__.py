"""Helpers shared by the tests (and the benchmarks): players, and the API's match helpers."""

"""Speed benchmarks: ``python -m speed NAME`` (``python -m speed`` lists them).

Every benchmark times memgym's code against a baseline measured in the same run and prints the
ratio, so numbers compare across machines. None of them is a test.
"""

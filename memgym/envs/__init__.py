"""Gymnasium environments: TwoPhaseEnv and the benchmark envs."""

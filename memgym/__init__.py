"""memgym: Gymnasium environments for agent memory.

Every benchmark is a two-phase episode: a *formation* phase in which a pluggable memory consumes
observations, then a *use* phase in which tasks ask it to navigate, answer or retrieve, scored
by task modules. See README.md for the two commands that get from a fresh clone to a result.
"""

from memgym.core.forking import install_fork_guard
from memgym.envs.registration import register_gym_envs
from memgym.plugin_table import declare_builtins

__version__ = "0.1.0"

declare_builtins()  # registered names -> "module:attr"; each module is imported on first use
register_gym_envs()  # the gymnasium ids of the env registry's envs
install_fork_guard()  # forked workers (async vector envs) stay usable after torch ran here

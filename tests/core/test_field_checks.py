"""Config checks declared on the fields (memgym.core.field_checks), and the one-line messages the
AMemOps eval and intervention configs give through them (unchanged from their old __post_init__s)."""

import dataclasses

import pytest

from memgym.core.errors import ConfigError
from memgym.core.field_checks import check_fields, checked, each, members, requires
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.interventions import AMemOpsInterventionConfig


@dataclasses.dataclass(frozen=True)
class Pairs:
    first: tuple[str, ...] = dataclasses.field(
        default=(), metadata=checked(each(lambda name, v, c: f"{name}: '{v}' has no ':'" if ":" not in v else None))
    )
    kind: str = dataclasses.field(default="a", metadata=checked(members(("a", "b"), "is no kind; kinds: {choices}")))
    resamples: int = 0
    second: bool = dataclasses.field(default=False, metadata=checked(requires(lambda c: c.resamples > 0, "no")))

    def __post_init__(self) -> None:
        check_fields(self)


def test_checks_run_in_field_order_and_the_first_problem_is_raised():
    assert Pairs(first=("a:b",), kind="b", resamples=1, second=True).kind == "b"
    with pytest.raises(ConfigError, match=r"^first: 'ab' has no ':'$"):
        Pairs(first=("a:b", "ab"), kind="c", second=True)
    with pytest.raises(ConfigError, match=r"^kind: 'c' is no kind; kinds: a, b$"):
        Pairs(kind="c", second=True)
    with pytest.raises(ConfigError, match=r"^no$"):
        Pairs(second=True)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"models": ("gdn2", "lstm@x")}, "models: 'lstm@x' is not a memory core or <core>@<variant>; cores: "),
        ({"history_contrasts": ("lstm",)}, "history_contrasts: 'lstm' is not a memory core; choose from "),
        ({"exclude": ("nothing",)}, "exclude: 'nothing' is unknown; choose from training_audio, duplicate_notes"),
        ({"recording_contrasts": ("fixed:fixed",)}, "recording_contrasts: 'fixed:fixed' must be 'A:B' with two"),
        (
            {"recording_contrasts": ("fixed:original",), "bootstrap_resamples": 0},
            "recording_contrasts report bootstrap intervals: set bootstrap_resamples > 0",
        ),
        ({"recording_contrasts": ("fixed:original",), "stream_set": "s"}, "recording_contrasts regenerate streams"),
        (
            {"eval_sets": (0, 1), "stream_set": "s"},
            "eval_sets cannot be combined with recording_contrasts or stream_set",
        ),
        ({"familiarity": ("gdn2",)}, r"familiarity must be \[reference,baseline\] memory cores, got \['gdn2'\]"),
        ({"familiarity": ("gdn2", "kda"), "eval_sets": (0,)}, "familiarity needs eval_sets with two or more"),
        ({"contrasts": ("gdn2:lstm",)}, "contrasts: 'gdn2:lstm' names 'lstm', which is not in models"),
        (
            {"update_interactions": ("gdn2:kda",), "bootstrap_resamples": 0},
            "contrasts report bootstrap intervals: set bootstrap_resamples > 0",
        ),
        ({"breakdowns": ("pitch",)}, "breakdowns: 'pitch' is unknown; choose from pitch_difference"),
    ],
)
def test_amemops_eval_config_messages(overrides, message):
    with pytest.raises(ConfigError, match=message):
        AMemOpsEvalConfig(**overrides)


def test_amemops_intervention_config_messages():
    with pytest.raises(ConfigError, match="^intervention must be true for the state-intervention job$"):
        AMemOpsInterventionConfig(intervention=False)
    with pytest.raises(ConfigError, match="^models: 'attention' has no recurrent state S to edit"):
        AMemOpsInterventionConfig(models=("gdn2", "attention"))
    with pytest.raises(ConfigError, match=r"^rank and bootstrap_resamples must be >= 1 and random_subspaces >= 0$"):
        AMemOpsInterventionConfig(random_subspaces=-1)

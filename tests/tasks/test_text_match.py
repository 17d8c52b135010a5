import pytest

from memgym.core.episode import TaskItem
from memgym.core.registry import SCORERS
from memgym.tasks.text_match import normalize_answer, token_f1


def item(answer):
    return TaskItem(item_id="q", task="qa", answer=answer)


def test_normalisation():
    assert normalize_answer("The  Red mug.") == "red mug"


def test_exact_match_against_any_reference():
    scorer = SCORERS.get("exact_match")()
    assert scorer.score(item(["sofa", "couch"]), "A couch!")["exact_match"] == 1.0
    assert scorer.score(item("sofa"), "bed")["reward"] == 0.0


def test_token_f1_values():
    assert token_f1("red mug", "the red mug") == 1.0
    assert token_f1("red cup", "red mug") == pytest.approx(0.5)
    assert token_f1("", "") == 1.0
    assert SCORERS.get("token_f1")().score(item("blue bowl"), "bowl")["token_f1"] == pytest.approx(2 / 3)

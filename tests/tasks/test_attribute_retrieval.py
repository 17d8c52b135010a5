import pytest

from memgym.core.episode import TaskItem
from memgym.core.errors import MemgymError
from memgym.core.registry import SCORERS


def _item(attribute="pan", answer=2, previous=1):
    annotations = {
        "attribute": attribute,
        "type": "update",
        "operation": "updated",
        "delay_s": 3.0,
        "previous_index": previous,
    }
    return TaskItem(item_id="q00", task="attribute_query", answer=answer, annotations=annotations)


def test_scores_only_the_asked_head():
    scorer = SCORERS.get("attribute_query")()
    assert scorer.score(_item(), (0, 2))["correct"] is True
    assert scorer.score(_item(), (2, 0))["correct"] is False
    assert scorer.score(_item(attribute="gain"), {"gain": 2, "pan": 4})["reward"] == 1.0
    assert scorer.score(_item(), 2)["reward"] == 1.0


def test_previous_value_and_columns():
    scored = SCORERS.get("attribute_query")().score(_item(), (3, 1))
    assert scored["previous_value"] is True and scored["correct"] is False
    assert scored["type"] == "update" and scored["operation"] == "updated" and scored["delay_s"] == 3.0
    assert SCORERS.get("attribute_query")().score(_item(previous=None), 1)["previous_value"] is False


def test_bad_prediction():
    with pytest.raises(MemgymError, match="has no 'pan' entry"):
        SCORERS.get("attribute_query")().score(_item(), {"gain": 1})
    with pytest.raises(MemgymError, match="must be a class"):
        SCORERS.get("attribute_query")().score(_item(), [1, 2, 3])

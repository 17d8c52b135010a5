"""Each eval's scorer key (``qa_scorer=``, ``scorer=``) names a registered scorer of its benchmark's
task; an unknown name or another task's scorer is one ``memgym: error:`` line, with the close names
and the scorers it takes. (Each benchmark's eval test selects a scorer registered at runtime.)"""

from __future__ import annotations

import pytest

from memgym.cli import main


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["eval", "dialogmem", "qa_scorer=token_f"], "qa_scorer: unknown scorer 'token_f' (did you mean 'token_f1'?)"),
        (["eval", "dialogmem", "qa_scorer=voxmem"], "qa_scorer: scorer 'voxmem' scores spoken_qa items, not qa"),
        (["eval", "voxmem", "scorer=voxmen"], "scorer: unknown scorer 'voxmen' (did you mean 'voxmem'?)"),
        (["eval", "amemops", "scorer=token_f1"], "scorer: scorer 'token_f1' scores qa items, not attribute_query"),
    ],
)
def test_unknown_or_unfit_scorers_are_one_error_line(args, expected, tmp_path, capsys):
    assert main([*args, "--runs-dir", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"memgym: error: {expected}")

"""``memgym eval voxmem``: rows per (model, memory, item), over-context, resume after a kill, tables."""

from __future__ import annotations

import csv
import dataclasses
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from fake_openai import FakeEndpoint
from runtime_scorers import TaggedVoxMem, registered

import memgym.pipelines.voxmem.evaluation as voxmem_eval
from memgym.backends.errors import OverContextError
from memgym.core.benchmark import JobArgs
from memgym.core.chat import AudioPart
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.scoring import ScorerContext
from memgym.tasks.voxmem.scoring import VoxMemScorer


class KnowsTheAnswers(Reasoner):
    """A scripted model that hedges, then gives the gold answer (refuses on AR items).

    An AR item asks its source item's question, so it knows the answer of questions asked once."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.calls = 0

    def generate(self, messages, *, max_new_tokens=256):
        self.calls += 1
        question = messages[-1].text_only().rsplit("Question: ", 1)[1]
        answer = self.answers.get(question, "")
        return "I can't tell from our conversations." if answer == "unanswerable" else f"Not sure, but {answer}."


class ShortContextAudioModel(Reasoner):
    """An audio model whose context holds at most 3 audio parts."""

    def generate(self, messages, *, max_new_tokens=256):
        audio = sum(isinstance(p, AudioPart) for m in messages for p in m.content)
        if audio > 3:
            raise OverContextError(f"{audio} audio parts do not fit", tokens=audio, limit=3)
        return "yes"


@pytest.fixture
def patched(vox_dataset, truth_asr, monkeypatch):
    items = [e.items[0] for e in Dataset.load(vox_dataset / "manifest.jsonl")]
    asked = [i.prompt for i in items]
    oracle = KnowsTheAnswers({i.prompt: i.answer for i in items if asked.count(i.prompt) == 1})
    models = {"structured": oracle, "hf_audio:short": ShortContextAudioModel()}
    monkeypatch.setattr(voxmem_eval, "build_model", lambda spec, device="cpu": models[spec])
    monkeypatch.setattr(voxmem_eval, "build_asr", lambda config, device="cpu": truth_asr)
    return oracle


def _run(vox_dataset, runs: Path, *extra: str) -> Path:
    overrides = (f"dataset={vox_dataset}", "name=t", *extra)
    return voxmem_eval.evaluate(JobArgs(overrides=overrides, runs_dir=runs, progress=False))


def test_eval_rows_tables_and_resume(vox_dataset, patched, tmp_path):
    memories = "memories=[oracle_tags,transcript,full_history]"
    folder = _run(vox_dataset, tmp_path, "models=[structured,hf_audio:short]", memories)
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    # structured hears no audio: 2 text memories x 5 items; the audio model: 3 memories x 5 items
    assert len(rows) == 2 * 5 + 3 * 5
    text_rows = [r for r in rows if r["model"] == "structured"]
    assert all(r["status"] == "ok" and r["reply"] for r in text_rows)
    known = [r for r in text_rows if r["question"] in patched.answers]
    assert len(known) >= 6 and all(r["correct"] == 1.0 for r in known)
    audio_rows = [r for r in rows if r["model"] == "hf_audio:short" and r["memory"] == "full_history"]
    assert {r["status"] for r in audio_rows} == {"over_context"} and all(r["correct"] == 0.0 for r in audio_rows)
    markdown = (folder / "results.md").read_text()
    assert "(not a cell)" in markdown and "| speaker |" in markdown and "over_context" in markdown
    assert "Not applicable" in markdown and (folder / "accuracy_vs_budget.png").is_file()
    for name in ("semantic_gap.csv", "semantic_gap.png", "error_taxonomy.csv", "error_taxonomy.png"):
        assert (folder / name).is_file() and name in markdown
    taxonomy = (folder / "error_taxonomy.csv").read_text().splitlines()
    assert taxonomy[0].startswith("model,memory,evidence,n,correct,")
    assert len(taxonomy) == 1 + 2 * 4 + 3 * 4  # (model, memory) x the 4 evidence types of the tiny build

    # a kill: the last two rows are lost and the next one was half written
    lines = (folder / "results.jsonl").read_text().splitlines(keepends=True)
    (folder / "results.jsonl").write_text("".join(lines[:-2]) + lines[-2][:25])
    calls = patched.calls
    _run(vox_dataset, tmp_path, "models=[structured,hf_audio:short]", memories)
    again = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(again) == len(rows) and {r["key"] for r in again} == {r["key"] for r in rows}
    assert patched.calls == calls  # the lost rows were audio-model rows; the text model was not asked again


def test_scorer_takes_a_scorer_registered_at_runtime(vox_dataset, patched, tmp_path):
    """The env scores each reply with it (the row is its score, not a second scoring)."""
    with registered("test_tagged_voxmem", TaggedVoxMem):
        folder = _run(vox_dataset, tmp_path, "memory=oracle_tags", "scorer=test_tagged_voxmem")
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 5 and all(r["reply_chars"] == len(r["reply"]) for r in rows)
    assert sum(r["correct"] for r in rows) >= 3  # the verdict keys of VoxMemScorer are kept


def test_one_memory_is_the_same_run_as_a_list_of_one(vox_dataset, patched, tmp_path):
    folder = _run(vox_dataset, tmp_path, "memory=oracle_tags")
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert {r["memory"] for r in rows} == {"oracle_tags"} and len(rows) == 5
    calls = patched.calls
    assert _run(vox_dataset, tmp_path, "memories=[oracle_tags]") == folder  # same config, resumed: nothing new
    assert patched.calls == calls and len((folder / "results.jsonl").read_text().splitlines()) == 5


@pytest.mark.slow
def test_env_path_equals_the_direct_path_item_by_item(vox_dataset, truth_asr, tmp_path, monkeypatch):
    """The eval plays items through memgym/VoxMem-v0; feeding each memory the dataset's turns
    directly (no env) gives the offline reader the same chat, so the same reply and verdict, for
    every item."""
    from memgym.pipelines.structured_reasoner import StructuredReasoner

    monkeypatch.setattr(voxmem_eval, "build_model", lambda spec, device="cpu": StructuredReasoner())
    monkeypatch.setattr(voxmem_eval, "build_asr", lambda config, device="cpu": truth_asr)
    from memgym.datasets.voxmem.audio_files import read_turn_audio
    from memgym.memory.voxmem.history import VoxMemQuery, VoxMemTurn

    folder = _run(vox_dataset, tmp_path, "memories=[cascaded,transcript,oracle_tags]")
    rows = {r["key"]: r for r in map(json.loads, (folder / "results.jsonl").read_text().splitlines())}
    config = voxmem_eval.VoxMemEvalConfig(dataset=str(vox_dataset))
    runner = voxmem_eval.ItemRunner(config, vox_dataset, None, None)
    scorer = VoxMemScorer.from_context(ScorerContext(dataset_dir=str(vox_dataset.resolve())))
    replies = []
    for episode in Dataset.load(vox_dataset / "manifest.jsonl"):
        item = episode.items[0]
        for name in ("cascaded", "transcript", "oracle_tags"):
            memory = voxmem_eval.voxmem_memory(name).from_options(runner.options)
            memory.bind_episode(episode, asker=runner.askers.get(item.item_id, ""))
            for k, session in enumerate(episode.sessions):
                for turn in session.turns:
                    user = turn.role == "user"
                    audio = read_turn_audio(vox_dataset / turn.audio) if user else np.zeros(0, np.float32)
                    memory.observe(VoxMemTurn(k, session.timestamp, turn.role, audio, "" if user else turn.text))
            question = VoxMemQuery(item.prompt, read_turn_audio(vox_dataset / episode.question_audio))
            reply = StructuredReasoner().generate(memory.retrieve(question), max_new_tokens=32)
            row = rows[f"structured|{name}|{episode.episode_id}"]
            assert (row["reply"], row["correct"]) == (reply, scorer.score(item, reply)["correct"])
            replies.append(reply)
    assert len(set(replies)) > 5  # the replies depend on what each memory holds


class CountsBatches:
    """Wraps a recogniser; records how many clips each ``transcribe_batch`` call holds."""

    def __init__(self, asr):
        self.asr, self.sizes = asr, []

    def identity(self) -> str:
        return "counted-" + self.asr.identity()

    def transcribe(self, audio, sample_rate):
        return self.asr.transcribe(audio, sample_rate)

    def transcribe_batch(self, clips, sample_rate):
        self.sizes.append(len(clips))
        return [self.asr.transcribe(c, sample_rate) for c in clips]


def test_history_batches_hear_each_item_in_one_call_with_the_same_replies(
    vox_dataset, truth_asr, tmp_path, monkeypatch
):
    """asr.batch_scope=history: every user turn of an item's history reaches the recogniser in one
    call before the item is played (the memories then find them cached); per session otherwise.
    The words, so the rows, are the same."""
    from memgym.pipelines.structured_reasoner import StructuredReasoner

    monkeypatch.setattr(voxmem_eval, "build_model", lambda spec, device="cpu": StructuredReasoner())
    runs = {}
    for scope in ("session", "history"):
        asr = CountsBatches(truth_asr)
        monkeypatch.setattr(voxmem_eval, "build_asr", lambda config, device="cpu", asr=asr: asr)
        folder = _run(vox_dataset, tmp_path / scope, "memories=[transcript]", "asr.batch_turns=4",
                      f"asr.batch_scope={scope}")  # fmt: skip
        rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
        runs[scope] = asr.sizes, {r["key"]: (r["reply"], r["correct"]) for r in rows}
    (history, _), (per_session, _) = runs["history"], runs["session"]
    items = len(Dataset.load(vox_dataset / "manifest.jsonl"))
    # each distinct turn is heard once either way; at most one call per item, holding several sessions
    assert sum(history) == sum(per_session) and len(history) <= items < len(per_session)
    assert max(history) > max(per_session)
    assert runs["history"][1] == runs["session"][1] and len(runs["session"][1]) == items


def test_history_batches_need_batched_turns():
    from memgym.pipelines.voxmem.models import ASRConfig, build_asr

    with pytest.raises(ConfigError, match="batch_turns"):
        build_asr(ASRConfig(batch_scope="history"))


def test_bad_settings_are_config_errors(vox_dataset, patched, tmp_path):
    with pytest.raises(ConfigError, match="'notes' is not a VoxMem memory"):
        _run(vox_dataset, tmp_path, "memories=[notes]")
    with pytest.raises(ConfigError, match="'notes' is not a VoxMem memory"):
        _run(vox_dataset, tmp_path, "memory=notes")
    for other in ("dialogue", "gdn2"):  # DialogMem's and AMemOps' memories are refused by name
        with pytest.raises(ConfigError, match=f"'{other}' is not a VoxMem memory .*VoxMem takes: cascaded"):
            _run(vox_dataset, tmp_path, f"memory={other}")
    with pytest.raises(ConfigError, match="not both"):
        _run(vox_dataset, tmp_path, "memory=cascaded", "memories=[transcript]")
    with pytest.raises(ConfigError, match="twice"):
        _run(vox_dataset, tmp_path, "memories=[cascaded,cascaded]")
    with pytest.raises(ConfigError, match="budgets"):
        _run(vox_dataset, tmp_path, "budgets=[64k]")
    with pytest.raises(ConfigError, match="no manifest"):
        voxmem_eval.evaluate(JobArgs(overrides=(f"dataset={tmp_path}",), runs_dir=tmp_path, progress=False))


def test_model_specs_are_checked():
    from memgym.pipelines.voxmem.models import build_model, model_hears_audio

    assert model_hears_audio("openai:qwen2-audio@http://127.0.0.1:8000/v1") and not model_hears_audio("smollm2")
    with pytest.raises(ConfigError, match="not a model spec"):
        build_model("gpt")


class AnswersAHaystackValue(Reasoner):
    """Answers every question with ``value`` (whatever the chat holds)."""

    def __init__(self, value: str):
        self.value = value

    def generate(self, messages, *, max_new_tokens=256):
        return f"It was {self.value}."


def test_the_taxonomy_blames_only_sessions_the_memory_handed_over(vox_dataset, truth_asr, tmp_path, monkeypatch):
    """A semantics TET reply naming a value that only a haystack states is a haystack error for
    ``cascaded`` (handed every session) and cannot be one for ``cascaded_evidence_only`` (never
    handed a haystack): there it is a value no handed session holds, and its haystack chance is 0."""
    from memgym.datasets.voxmem.records import VoxMemEpisode

    episodes = [e for e in Dataset.load(vox_dataset / "manifest.jsonl") if isinstance(e, VoxMemEpisode)]
    tet = next(e for e in episodes if e.items[0].annotations["cell"] == "semantics/TET")
    evidence = set(tet.items[0].annotations["evidence_sessions"])
    stated = {s.fact.value for s in tet.sessions if s.session_id in evidence}
    value = next(s.fact.value for s in tet.sessions if s.role == "haystack" and s.fact.value not in stated)
    monkeypatch.setattr(voxmem_eval, "build_model", lambda spec, device="cpu": AnswersAHaystackValue(value))
    monkeypatch.setattr(voxmem_eval, "build_asr", lambda config, device="cpu": truth_asr)
    monkeypatch.setattr(voxmem_eval, "train_sound_tagger", lambda dataset_dir: None)
    folder = _run(vox_dataset, tmp_path, "memories=[cascaded,cascaded_evidence_only]", "top_sessions=0")
    rows = {r["key"]: r for r in map(json.loads, (folder / "results.jsonl").read_text().splitlines())}
    every = list(range(len(tet.sessions)))
    evidence_indices = [i for i, s in enumerate(tet.sessions) if s.session_id in evidence]
    full, probe = (rows[f"structured|{m}|{tet.episode_id}"] for m in ("cascaded", "cascaded_evidence_only"))
    assert full["handed_sessions"] == full["formed_sessions"] == every
    assert probe["handed_sessions"] == probe["formed_sessions"] == evidence_indices
    assert full["handed_turns"] == sum(len(s.turns) for s in tet.sessions) > probe["handed_turns"]
    table = {
        (r["memory"], r["evidence"]): r
        for r in csv.DictReader((folder / "error_taxonomy.csv").read_text().splitlines())
    }
    assert float(table[("cascaded", "semantics")]["haystack"]) >= 1
    assert float(table[("cascaded", "semantics")]["haystack chance"]) > 0
    probe_rows = [r for (memory, _), r in table.items() if memory == "cascaded_evidence_only"]
    assert all(float(r["haystack"]) == 0 and float(r["haystack chance"]) == 0 for r in probe_rows)
    assert float(table[("cascaded_evidence_only", "semantics")]["no_session"]) >= 1


def _endpoint_reply(prompt) -> str:
    """A verdict to a judge prompt, else an answer; both a function of the prompt."""
    text = json.dumps(prompt)
    digest = zlib.crc32(text.encode())
    return ("CORRECT", "WRONG", "REFUSAL")[digest % 3] if "You check answers" in text else f"maybe {digest % 4}"


def test_an_endpoint_model_plays_items_at_once_with_the_same_rows(vox_dataset, tmp_path):
    """An openai: model and judge at concurrency=3 against a server taking 50 ms per reply: the
    server holds several requests at once and the rows (order, replies, verdicts) are those of
    concurrency=1 (only the seconds differ)."""
    rows, endpoints = {}, {c: FakeEndpoint(respond=_endpoint_reply, delay_s=0.05) for c in (1, 3)}
    try:
        for concurrency, endpoint in endpoints.items():
            url = endpoint.base_url
            folder = _run(vox_dataset, tmp_path / f"c{concurrency}", f"models=[openai:m@{url}]",
                          f"judge=openai:j@{url}", "memories=[oracle_tags,full_history]",
                          f"concurrency={concurrency}")  # fmt: skip
            lines = (folder / "results.jsonl").read_text().replace(url, "URL").splitlines()  # keys name the model
            rows[concurrency] = [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in lines]
    finally:
        for endpoint in endpoints.values():
            endpoint.close()
    assert len(rows[1]) == 10 and {r["status"] for r in rows[1]} == {"ok"}
    assert rows[3] == rows[1]
    assert endpoints[1].max_in_flight == 1 and endpoints[3].max_in_flight >= 2


def test_items_at_once_only_for_endpoints_and_a_shared_recogniser():
    config = voxmem_eval.VoxMemEvalConfig(memories=("oracle_tags",), concurrency=6)
    remote = "openai:m@http://127.0.0.1:8000/v1"
    assert voxmem_eval.items_at_once(config, remote) == 6
    assert voxmem_eval.items_at_once(config, "structured") == 1
    judged = voxmem_eval.VoxMemEvalConfig(memories=("oracle_tags",), judge="hf:/models/judge")
    assert voxmem_eval.items_at_once(judged, remote) == 1
    heard = voxmem_eval.VoxMemEvalConfig(memories=("oracle_tags", "cascaded"))
    assert voxmem_eval.items_at_once(heard, remote) == 1  # one local recogniser: one item at a time
    served = dataclasses.replace(heard, asr=voxmem_eval.ASRConfig(kind="openai", model="w", base_url="http://h/v1"))
    assert voxmem_eval.items_at_once(served, remote) == 8

"""Quality control: deterministic session checks and item checks over assembled histories.

Session level (QC-1), per rendered user turn:
  * ``duration`` -- 0.3 s <= duration <= 30 s;
  * ``clipping`` -- at most 0.1 % of samples at full scale;
  * ``snr`` -- achieved SNR within 0.5 dB of the target where a sound is mixed;
  * ``cue`` -- the cue-removed pair really differs in the cue's acoustic feature
    (:data:`~memgym.datasets.speech.cues.CUE_MIN_DELTA`);
  * ``intelligible`` -- in evidence sessions, an offline speech recogniser
    (:class:`IntelligibilityGate`) hears the answer-bearing words of every user turn as heard
    (cue spoken, sound mixed): the stated value, where the turn says it.

Item level (QC-2), per episode (item x budget):
  * ``unique_answer`` -- the oracle over every topical session of the assembled history (evidence,
    haystacks, borrowed sessions) gives the gold answer: no added session supplies another;
  * ``transcript_only`` -- for audio-native items, a text-only answerer that knows every word and
    the session order but no voice, tone or sound still has a wrong answer it cannot exclude, and
    no turn names a voice, tone or sound (no leakage);
  * ``filler_clean`` -- no filler mentions a subject the question names;
  * ``budget`` -- the history fits its budget;
  * ``nesting`` -- each longer history contains the shorter one's sessions in the same order.

Dataset level: ``reuse`` -- no session appears in more items' histories than the limit;
``separability`` -- a text-only classifier should not tell evidence from haystack sessions by their
words much better than the same classifier trained on shuffled labels (folds grouped by
derivation family; :mod:`memgym.datasets.voxmem.separability`).

Optional model check (``qc_reasoner``): a text-only reasoner reads the transcript of the
smallest history (words and timestamps, no audio) and answers each audio-native question; how
many it solves is reported next to the chance level of the item's answer format (yes/no items are
solved half the time by guessing), so a cell that a transcript answers far above chance shows up.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.backends.asr import ASRBackend, ASRConfig
from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.core.words import normalize_answer
from memgym.datasets.speech.cues import CUE_MIN_DELTA
from memgym.datasets.speech.intelligibility import phrase_recognised, word_errors
from memgym.datasets.voxmem.oracle import answer_query, sound_label, transcript_candidates
from memgym.datasets.voxmem.records import Plan, Session, SessionFact, Turn, VoxMemEpisode
from memgym.datasets.voxmem.writing import leaks

MIN_TURN_S = 0.3
MAX_TURN_S = 30.0
MAX_CLIPPED = 1e-3
SNR_TOLERANCE_DB = 0.5


def turn_failures(turn: Turn, snr_target: float) -> list[str]:
    """Names of the session-level checks ``turn`` fails (empty when it passes)."""
    if turn.role != "user":
        return []
    failed = []
    if not MIN_TURN_S <= turn.duration_s <= MAX_TURN_S:
        failed.append("duration")
    if turn.clipped > MAX_CLIPPED:
        failed.append("clipping")
    if turn.sound and (turn.snr_db is None or abs(turn.snr_db - snr_target) > SNR_TOLERANCE_DB):
        failed.append("snr")
    if turn.cue != "neutral" and (turn.cue_delta is None or turn.cue_delta < CUE_MIN_DELTA[turn.cue]):
        failed.append("cue")
    return failed


def session_failures(sessions: Sequence[Session], snr_target: float) -> dict[str, list[str]]:
    """session id -> failed session-level checks (only sessions with failures)."""
    out = {}
    for session in sessions:
        failed = sorted({name for turn in session.turns for name in turn_failures(turn, snr_target)})
        if failed:
            out[session.session_id] = failed
    return out


def answer_phrases(fact: SessionFact, text: str) -> tuple[str, ...]:
    """The answer-bearing phrases a user turn says: the fact's stated value, if the turn says it."""
    return (fact.value,) if fact.value and fact.value.lower() in text.lower() else ()


@dataclasses.dataclass(frozen=True)
class HeardTurn:
    """What the recogniser heard in one user turn and how it scores.

    Attributes:
        audio: dataset-relative path of the turn as heard.
        transcript: the recogniser's text.
        errors, words: word errors against the turn's words, and their count (WER = errors / words).
        required: the answer-bearing phrases the turn says (:func:`answer_phrases`).
        missing: those of ``required`` not found in the transcript.
    """

    audio: str
    transcript: str
    errors: int
    words: int
    required: tuple[str, ...]
    missing: tuple[str, ...]


class IntelligibilityGate:
    """QC-1 ``intelligible``: evidence turns must be heard correctly by an offline recogniser.

    Transcripts are stored next to each turn's audio (``audio/ab/<key>.asr.json``, keyed by the
    recogniser's identity), so a re-build of the same folder decodes nothing again.

    Args:
        root: dataset folder (turn audio paths are relative to it).
        asr: the speech recogniser.
    """

    def __init__(self, root: Path, asr: ASRBackend) -> None:
        self.root = Path(root)
        self.asr = asr
        self.identity = asr.identity()

    def _stored(self, audio: str) -> tuple[Path, dict[str, str]]:
        cache = self.root / Path(audio).with_suffix(".asr.json")
        return cache, (json.loads(cache.read_text(encoding="utf-8")) if cache.is_file() else {})

    def _store(self, cache: Path, stored: dict[str, str]) -> None:
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, sort_keys=True), encoding="utf-8")
        tmp.replace(cache)

    def _samples(self, audio: str) -> tuple[np.ndarray, int]:
        import soundfile

        samples, rate = soundfile.read(str(self.root / audio), dtype="float32", always_2d=True)
        return samples.mean(axis=1), int(rate)

    def transcript(self, audio: str) -> str:
        """What the recogniser hears in the dataset file ``audio`` (cached on disk)."""
        cache, stored = self._stored(audio)
        if self.identity not in stored:
            stored[self.identity] = self.asr.transcribe(*self._samples(audio))
            self._store(cache, stored)
        return stored[self.identity]

    def prefetch(self, audios: Sequence[str], chunk: int = 64) -> None:
        """Transcribe the files of ``audios`` not yet cached, ``chunk`` at a time through the
        recogniser's ``transcribe_batch`` when it has one (same words as :meth:`transcript`)."""
        batch = getattr(self.asr, "transcribe_batch", None)
        todo = [a for a in dict.fromkeys(audios) if self.identity not in self._stored(a)[1]]
        for start in range(0, len(todo) if batch else 0, chunk):
            part = todo[start : start + chunk]
            loaded = [self._samples(a) for a in part]
            rates = {rate for _, rate in loaded}
            if len(rates) != 1:
                continue  # mixed rates: one by one in transcript()
            for audio, words in zip(part, batch([s for s, _ in loaded], rates.pop())):
                cache, stored = self._stored(audio)
                self._store(cache, {**stored, self.identity: words})

    def hear(self, turn: Turn, fact: SessionFact | None) -> HeardTurn:
        """Transcribe and score one rendered user turn (of a session about ``fact``; None: a
        haystack or filler turn, whose stated value is not required)."""
        heard = self.transcript(turn.audio)
        errors, words = word_errors(turn.text, heard)
        required = answer_phrases(fact, turn.text) if fact is not None else ()
        missing = tuple(p for p in required if not phrase_recognised(p, heard))
        return HeardTurn(turn.audio, heard, errors, words, required, missing)

    def failures(self, sessions: Sequence[Session]) -> dict[str, list[str]]:
        """session id -> ``["intelligible"]`` for evidence sessions with a missed answer-bearing phrase."""
        out = {}
        for session in sessions:
            if session.role != "evidence" or session.fact is None:
                continue
            if any(self.hear(t, session.fact).missing for t in session.turns if t.role == "user" and t.audio):
                out[session.session_id] = ["intelligible"]
        return out

    def report(self, episodes: Sequence[VoxMemEpisode]) -> dict[str, Any]:
        """WER over every user turn of ``episodes`` (each distinct turn audio once), by condition,
        role, voice, cue and background, and answer-phrase recognition over the evidence turns.

        Returns:
            ``{"asr", "turns", "wer", "wer_by_condition", "wer_by_role", "wer_by_voice",
            "wer_by_cue", "wer_by_background", "evidence_wer", "answer_turns": {"said",
            "recognised"}}``: ``condition`` is ``clean`` (neutral delivery, no sound), ``cued``,
            ``sound`` or ``cued+sound``; ``role`` the session's (evidence, haystack, filler);
            ``evidence_wer`` the evidence turns alone (what the gate heard); each ``wer*`` entry is
            ``{"wer", "words", "turns"}``. ``answer_turns`` counts evidence turns stating the
            value, and those in which the recogniser heard it.
        """
        turns: dict[str, tuple[Turn, Session, str]] = {}
        for episode in episodes:
            voices = episode.annotations.get("voices", {})
            for session in episode.sessions:
                for turn in session.turns:
                    if turn.role == "user" and turn.audio and turn.audio not in turns:
                        turns[turn.audio] = (turn, session, voices.get(turn.user, turn.user))
        self.prefetch(list(turns))
        seen: dict[str, tuple[HeardTurn, str, Turn, str]] = {}
        for audio, (turn, session, voice) in turns.items():
            fact = session.fact if session.role == "evidence" else None
            seen[audio] = (self.hear(turn, fact), voice, turn, session.role)
        groups: dict[str, dict[str, list[HeardTurn]]] = {
            name: {} for name in ("condition", "role", "voice", "cue", "background")
        }
        for heard, voice, turn, role in seen.values():
            groups["condition"].setdefault(turn_condition(turn), []).append(heard)
            groups["role"].setdefault(role, []).append(heard)
            groups["voice"].setdefault(voice, []).append(heard)
            groups["cue"].setdefault(turn.cue, []).append(heard)
            groups["background"].setdefault("sound" if turn.sound else "none", []).append(heard)
        said = [h for h, _, _, role in seen.values() if role == "evidence" and h.required]
        return {
            "asr": self.identity,
            "turns": len(seen),
            "wer": _wer([h for h, _, _, _ in seen.values()]),
            **{f"wer_by_{name}": {k: _wer(v) for k, v in sorted(g.items())} for name, g in groups.items()},
            "evidence_wer": _wer(groups["role"].get("evidence", [])),
            "answer_turns": {"said": len(said), "recognised": sum(not h.missing for h in said)},
        }


def turn_condition(turn: Turn) -> str:
    """``clean`` (neutral delivery, no background sound), ``cued``, ``sound`` or ``cued+sound``."""
    cued, sound = turn.cue != "neutral", bool(turn.sound)
    return {(False, False): "clean", (True, False): "cued", (False, True): "sound"}.get((cued, sound), "cued+sound")


def _wer(heard: Sequence[HeardTurn]) -> dict[str, float]:
    words = sum(h.words for h in heard)
    return {"wer": sum(h.errors for h in heard) / max(words, 1), "words": words, "turns": len(heard)}


def intelligibility_gate(root: Path, config: ASRConfig) -> IntelligibilityGate | None:
    """The gate with the recogniser ``config`` names; ``None`` when ``config.kind`` is ``"none"``."""
    if config.kind == "none":
        return None
    from memgym.backends.asr import make_asr_backend

    return IntelligibilityGate(root, make_asr_backend(config))


def item_failures(
    plan: Plan, histories: dict[int, Sequence[Session]], token_counts: dict[int, int], sound_classes: Sequence[str]
) -> list[str]:
    """Names of the item-level checks an item fails across its budgets."""
    labels = [sound_label(s) for s in sound_classes]
    budgets = sorted(histories)
    failed = [
        f"{check}@{budget}"
        for budget in budgets
        for check in _budget_failures(plan, histories[budget], token_counts[budget] > budget, labels)
    ]
    failed += [
        f"nesting@{short}<{long}" for short, long in zip(budgets, budgets[1:]) if not _nested(histories, short, long)
    ]
    return sorted(set(failed))


def _budget_failures(plan: Plan, sessions: Sequence[Session], over_budget: bool, labels: Sequence[str]) -> list[str]:
    """The checks an item's history at one budget fails (``unique_answer``, ``transcript_only``,
    ``filler_clean``, ``budget``); ``labels`` are the sound labels a transcript must not leak."""
    failed = []
    facts = [s.fact for s in sessions if s.fact is not None]
    if answer_query(plan.query, facts) != plan.answer:
        failed.append("unique_answer")
    if plan.audio_native and not (transcript_candidates(plan.query, facts) - {plan.answer}):
        failed.append("transcript_only")
    if any(leaks(t.text, labels) for s in sessions if s.role != "filler" for t in s.turns):
        failed.append("transcript_only")
    subjects = [x.lower() for x in plan.query.subjects]
    if any(x in t.text.lower() for s in sessions if s.role == "filler" for t in s.turns for x in subjects):
        failed.append("filler_clean")
    if over_budget:
        failed.append("budget")
    return failed


def _nested(histories: dict[int, Sequence[Session]], short: int, long: int) -> bool:
    """Whether the history at budget ``short`` is the one at ``long`` with sessions left out (every
    session of it there, in the same order)."""
    positions = {s.session_id: i for i, s in enumerate(histories[long])}
    ids_short = [s.session_id for s in histories[short]]
    return all(sid in positions for sid in ids_short) and [positions[s] for s in ids_short] == sorted(
        positions[s] for s in ids_short
    )


TRANSCRIPT_SYSTEM = (
    "You read transcripts of past conversations between users and an assistant. Who spoke, their tone "
    "of voice and any background sounds are not in the transcript. Answer the question with a short "
    "phrase only, or 'unanswerable' if the transcript does not tell."
)


def transcript_text(episode: VoxMemEpisode) -> str:
    """The history as text only: session headers with timestamps, then ``User:``/``Assistant:`` lines."""
    lines = []
    for index, session in enumerate(episode.sessions, start=1):
        lines.append(f"Session {index} - {session.timestamp}")
        lines += [f"{'User' if t.role == 'user' else 'Assistant'}: {t.text}" for t in session.turns]
    return "\n".join(lines)


def transcript_llm_solves(reasoner: Reasoner, episode: VoxMemEpisode) -> bool:
    """Whether a text-only reasoner answers the episode's question correctly from the transcript."""
    item = episode.items[0]
    prompt = f"{transcript_text(episode)}\n\nQuestion: {item.prompt}\nAnswer:"
    reply = reasoner.generate(
        [Message.text("system", TRANSCRIPT_SYSTEM), Message.text("user", prompt)], max_new_tokens=32
    )
    gold, said = normalize_answer(str(item.answer)), normalize_answer(reply)
    return bool(gold) and (said == gold or f" {gold} " in f" {said} ")


def reuse_counts(item_sessions: dict[str, set[str]]) -> collections.Counter:
    """session id -> number of items whose (longest) history contains it."""
    counts: collections.Counter = collections.Counter()
    for ids in item_sessions.values():
        counts.update(ids)
    return counts


def write_report(folder: Path, report: dict[str, Any]) -> Path:
    """Write ``qc_report.json`` and a readable ``qc_report.md`` into the dataset folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qc_report.json").write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    lines = ["# VoxMem quality-control report", ""]
    lines += [f"- items kept: {report['items_kept']} of {report['items_planned']} planned"]
    lines += [f"- discarded: {len(report['discarded'])}", f"- revised (redrawn): {report['revised']}"]
    lines += [f"- max session reuse: {report['max_session_reuse']} (limit {report['reuse_limit']})"]
    if "max_session_reuse_with_ar" in report:
        lines[-1] += (
            f"; {report['max_session_reuse_with_ar']} with the AR items, which re-speak their sources' histories"
        )
    lines += [f"- audio: {report['audio_hours']:.3f} h in {report['user_turns']} user turns"]
    if report.get("separability"):
        lines += _separability_lines(report["separability"])
    if report.get("transcript_llm"):
        llm = report["transcript_llm"]
        lines += [
            f"- text-only reasoner solved {llm['solved']} of {llm['asked']} audio-native items (chance ~{llm['chance']:.1f})"
        ]
    if report.get("intelligibility"):
        lines += _intelligibility_lines(report["intelligibility"])
    if report.get("model_qc"):
        lines += _model_qc_lines(report["model_qc"])
    lines.append("")
    lines += ["| check | failures (before revision) |", "| --- | ---: |"]
    lines += [f"| {name} | {count} |" for name, count in sorted(report["check_failures"].items())]
    if report.get("per_cell"):
        lines += [
            "",
            "| cell | planned | kept | dropped | drop rate | draws | redraws | redraw rate | gate-failed draws |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {cell} | {c['planned']} | {c['kept']} | {c['dropped']} | {c['drop_rate']:.0%} | {c['draws']} | "
            f"{c['redraws']} | {c['redraw_rate']:.0%} | {c['gate_failed_draws']} ({c['gate_fail_rate']:.0%}) |"
            for cell, c in report["per_cell"].items()
        ]
    else:
        lines += ["", "| cell | items |", "| --- | ---: |"]
        lines += [f"| {cell} | {count} |" for cell, count in sorted(report["items_per_cell"].items())]
    path = folder / "qc_report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_GROUPINGS = {
    "derivation": "derivation families",
    "topic": "topic families (the items' derivations chain into too few)",
}
"""How the report names the separability check's fold groups (``fold_groups``)."""


def _separability_lines(sep: dict[str, Any]) -> list[str]:
    """Report lines of the separability check: overall, then one row per evidence type, then the top words."""
    if "ci" not in sep:
        return [f"- evidence vs haystack, text-only classifier: not computed ({sep['sessions']} sessions)"]

    def row(name: str, r: dict[str, Any]) -> str:
        if "ci" not in r:
            return f"| {name} | - | - | {r['sessions']} |"
        lo, hi = r["ci"]
        slo, shi = r["shuffled_interval"]
        return f"| {name} | {r['accuracy']:.2f} [{lo:.2f}, {hi:.2f}] | {r['shuffled_accuracy']:.2f} [{slo:.2f}, {shi:.2f}] | {r['sessions']} |"

    lines = [
        f"- evidence vs haystack, text-only classifier (naive Bayes, {sep['folds']} folds over "
        f"{sep['families']} {_GROUPINGS[sep.get('grouping', 'derivation')]}; shuffled: {sep['permutations']} label permutations, 95 % interval):",
        "",
        "| sessions of | balanced accuracy [95 % CI] | shuffled [95 % interval] | sessions |",
        "| --- | ---: | ---: | ---: |",
        row("all", sep),
    ]
    lines += [row(name, r) for name, r in sep.get("by_evidence", {}).items()]
    for label, words in sep["top_features"].items():
        lines += [f"- words most indicative of {label}: " + ", ".join(f"{w} ({r:+.2f}, {n})" for w, r, n in words)]
    return lines


def _intelligibility_lines(heard: dict[str, Any]) -> list[str]:
    """Report lines for :meth:`IntelligibilityGate.report`: overall, then WER tables by condition,
    role, voice, cue and background."""
    turns = heard["answer_turns"]
    evidence = heard.get("evidence_wer", heard["wer"])
    lines = [
        f"- every user turn heard by {heard['asr']}: WER {heard['wer']['wer']:.1%} over {heard['turns']} turns "
        f"(evidence turns, which the gate checks: {evidence['wer']:.1%} over {evidence['turns']}); "
        f"stated value recognised in {turns['recognised']} of {turns['said']} evidence turns"
    ]
    for name in ("condition", "role", "voice", "cue", "background"):
        if f"wer_by_{name}" not in heard:  # reports written before every turn was heard
            continue
        lines += ["", f"| {name} | WER | words | turns |", "| --- | ---: | ---: | ---: |"]
        lines += [
            f"| {key} | {row['wer']:.1%} | {row['words']} | {row['turns']} |"
            for key, row in heard[f"wer_by_{name}"].items()
        ]
    return lines


def _model_qc_lines(section: dict[str, Any]) -> list[str]:
    """Report lines of the QC-1 model pass: failed turns per check, then each failing evidence turn."""
    counts = ", ".join(f"{name} {n}" for name, n in section["failed_turns_per_check"].items())
    lines = ["", f"QC-1 model pass ({section['model']}): failed evidence turns per check: {counts}"]
    if section["findings"]:
        lines += [
            "",
            "| item | attempt | session | check | turn | measured |",
            "| --- | ---: | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {f['item']} | {f['attempt']} | {f['session']} | {f['check']} | {f['audio']} | {f['detail']} |"
            for f in section["findings"]
        ]
    return lines

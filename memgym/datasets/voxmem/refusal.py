"""Answer refusal: an IE/MSR/TET plan turned into an AR plan.

:func:`derive_refusal` removes the context (the subject is never mentioned) or neutralises the
acoustic cue (tone or sound removed, or the asker's statements re-voiced by another user), so no
unique answer remains; for audio-native items the words stay unchanged. :func:`refusal_edit`
says which edit applies.
"""

from __future__ import annotations

import dataclasses

from memgym.core.errors import MemgymError
from memgym.datasets.voxmem.oracle import answer_query, transcript_candidates
from memgym.datasets.voxmem.records import Plan, SessionPlan
from memgym.datasets.voxmem.taxonomy import REFUSAL
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME


def _edited(source: Plan, edit: str) -> list[SessionPlan] | None:
    """``source``'s sessions with ``edit`` applied.

    ``drop_context``: sessions about the first subject move to an unused subject (it is no longer
    mentioned); ``drop_cue``: the evidence loses its acoustic cue (tone, background sound, or the
    asker's voice); ``revoice``: the asker's statements about the question's subjects are spoken
    by another user (words unchanged). ``None`` when the edit is impossible.
    """
    family = FAMILY_BY_NAME[source.query.family]
    used = {s.fact.subject for s in source.sessions}
    spare = [s for s in family.subjects if s not in used]
    target = source.query.subjects[0]
    asker = source.query.asker
    others = [u for u in source.users if u != asker]
    sessions = []
    for session in source.sessions:
        fact = session.fact
        if edit == "drop_context" and fact.subject == target:
            if not spare:
                return None
            fact = dataclasses.replace(fact, subject=spare[0])
        elif edit == "revoice" and fact.subject in source.query.subjects and fact.speaker == asker:
            fact = dataclasses.replace(fact, speaker=others[0])
        elif edit == "drop_cue" and session.role == "evidence" and fact.subject == target:
            if source.evidence == "speaker":
                fact = dataclasses.replace(fact, speaker=others[0])
            elif source.evidence == "paralinguistic":
                fact = dataclasses.replace(fact, cue="neutral")
            elif source.evidence == "sound":
                fact = dataclasses.replace(fact, sound="")
        sessions.append(dataclasses.replace(session, fact=fact))
    return sessions


REFUSAL_SCOPES = ("words_kept", "every_subtype")
"""Which edits may refuse an audio-native item: ``words_kept`` only those that keep every word
(``drop_cue``, ``revoice``); ``every_subtype`` also removes the evidence (``drop_context``) where
no such edit refuses, so every IE/MSR/TET subtype of every evidence type yields AR items."""


def refusal_edit(source: Plan, scope: str = "words_kept") -> str | None:
    """The edit that turns ``source`` into a valid AR item, or ``None`` when none does.

    Valid: the oracle over the edited facts refuses, and for audio-native evidence the words stay
    the same (``drop_cue`` / ``revoice``) and a text-only answerer still sees a non-refusal
    candidate -- the model must notice from the audio that the needed evidence is gone. Semantic
    items use ``drop_context``. Counting items qualify when their premise can be removed:
    semantic ones lose their subject, paralinguistic ones ("did I sound ...") the asker's voice;
    counting who spoke or what was audible has no such edit (removing a voice or a sound
    changes the count, not whether the question has an answer). With ``scope="every_subtype"``
    an audio-native item no such edit refuses (who said it, what was audible: counting,
    matching, tracking) has its evidence removed instead (``drop_context``: the question's
    subject never comes up); that refusal shows in the transcript (:func:`derive_refusal` marks
    the AR item not audio-native).
    """
    if scope not in REFUSAL_SCOPES:
        raise MemgymError(f"refusal scope '{scope}' is not one of {REFUSAL_SCOPES}")
    if source.operation not in ("IE", "MSR", "TET"):
        return None
    edits = ("drop_context",) if source.evidence == "semantics" else ("drop_cue", "revoice")
    if scope == "every_subtype" and source.evidence != "semantics":
        edits += ("drop_context",)
    for edit in edits:
        if edit == "drop_cue" and source.subtype != "cue_to_fact":
            continue
        sessions = _edited(source, edit)
        if sessions is None:
            continue
        facts = [s.fact for s in sorted(sessions, key=lambda s: (s.order < 0, s.order))]
        if answer_query(source.query, facts) != REFUSAL:
            continue
        words_kept = edit != "drop_context"
        if source.audio_native and words_kept and not (transcript_candidates(source.query, facts) - {REFUSAL}):
            continue
        return edit
    return None


def derive_refusal(source: Plan, plan_id: str, scope: str = "words_kept") -> Plan:
    """The AR plan of ``source``: same sessions and question, evidence neutralised or removed
    (:func:`refusal_edit` with ``scope``), answer REFUSAL. An AR item whose evidence was removed
    (``drop_context``) is not audio-native: the transcript shows the subject never came up.

    Raises:
        MemgymError: ``source`` is not eligible (:func:`refusal_edit` is ``None``).
    """
    edit = refusal_edit(source, scope)
    if edit is None:
        raise MemgymError(f"plan {source.plan_id} ({source.cell}/{source.subtype}) cannot be turned into an AR item")
    sessions = _edited(source, edit)
    edits = {new.key: edit for new, old in zip(sessions, source.sessions) if new.fact != old.fact}
    return dataclasses.replace(
        source,
        plan_id=plan_id,
        operation="AR",
        subtype=f"from_{source.operation}",
        answer=REFUSAL,
        sessions=tuple(sessions),
        audio_native=source.audio_native and edit != "drop_context",
        source_plan_id=source.plan_id,
        ar_edits=edits,
    )

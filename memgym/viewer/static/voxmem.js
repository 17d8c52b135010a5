"use strict";
// VoxMem: the history as a timeline of sessions coloured by role, a session's turns with audio
// players, transcripts and cues; the question, gold answer and each model's reply and score.
Memgym.views.voxmem = function (root, ep) {
  const el = Memgym.el;
  const totalTokens = ep.sessions.reduce((sum, s) => sum + Math.max(s.tokens, 1), 0);
  const detail = el("div", { id: "session-detail", class: "panel" });
  const blocks = ep.sessions.map((session, k) => el("div", {
    class: "session role-" + session.role, "data-session": k, "data-role": session.role,
    title: `session ${k + 1}: ${session.role}, ${session.tokens} tokens, ${session.timestamp}`,
    style: `width: ${(100 * Math.max(session.tokens, 1)) / totalTokens}%`,
    onclick: () => showSession(k),
  }));

  function showSession(k) {
    const session = ep.sessions[k];
    blocks.forEach((b, j) => b.classList.toggle("selected", j === k));
    const fact = session.fact
      ? Object.entries(session.fact).filter(([, v]) => v !== "" && v !== null && v !== false)
        .map(([key, v]) => el("span", { class: "tag" }, key + ": " + Memgym.fmt(v)))
      : [el("span", { class: "note" }, "no fact (filler)")];
    detail.replaceChildren(el("div", {},
      el("div", {}, el("b", {}, `Session ${k + 1} of ${ep.sessions.length}`), " ",
        el("span", { class: "tag role-" + session.role, id: "session-role" }, session.role), " ",
        `${session.timestamp} · ${session.tokens} tokens · ${session.source}`),
      el("div", {}, fact),
      session.turns.map((turn) => el("div", { class: "vturn " + turn.role },
        el("b", {}, turn.role === "user" ? `user ${turn.user}` : "assistant"), ": ",
        el("span", { class: "transcript" }, turn.text), " ",
        turn.role === "user" ? [el("span", { class: "tag" }, "cue: " + turn.cue),
          turn.sound ? el("span", { class: "tag" }, "sound: " + turn.sound) : null] : null,
        turn.audio ? el("div", {}, el("audio", { controls: true, preload: "none", src: turn.audio })) : null))));
  }

  const results = ep.results.map((r) => el("tr", { "data-model": r.model, "data-memory": r.memory },
    el("td", {}, r.model), el("td", {}, r.memory),
    el("td", { class: "reply" }, r.error ? el("span", { class: "error" }, r.error) : Memgym.fmt(r.reply)),
    el("td", {}, Memgym.scoreCell(r.correct)), el("td", {}, r.status || "–"),
    el("td", {}, r.reply_class || "–")));
  const evidence = ep.sessions.filter((s) => s.role === "evidence").length;
  root.append(
    el("h2", {}, `Episode ${ep.id}`, el("span", { class: "note" },
      ` · ${ep.annotations.cell || ""} · budget ${ep.budget} · ${ep.tokens} tokens · ` +
      `${ep.sessions.length} sessions (${evidence} evidence)`)),
    el("div", { class: "panel", id: "question" },
      el("div", {}, "Question: ", el("b", { id: "question-text" }, ep.question)),
      ep.question_audio ? el("audio", { id: "question-audio", controls: true, preload: "none", src: ep.question_audio }) : null,
      el("div", {}, "Gold answer: ", el("b", { id: "gold-answer" }, Memgym.fmt(ep.answer))),
      el("div", {}, Object.entries(ep.item_annotations).map(([k, v]) => el("span", { class: "tag" }, k + ": " + Memgym.fmt(v))))),
    el("h2", {}, "History"),
    el("div", { class: "legend note" }, "roles:", ["evidence", "haystack", "filler"].map((role) =>
      [el("span", { class: "role-" + role }), role])),
    el("div", { class: "timeline", id: "timeline" }, blocks),
    el("h2", {}, "Session"), detail,
    el("h2", {}, "Replies"),
    results.length ? Memgym.table(["model", "memory", "reply", "correct", "status", "class"], results, { id: "replies" })
      : el("p", { class: "note" }, "No replies: this is a dataset; view an eval run folder to see the models' replies."));
  const first = ep.sessions.findIndex((s) => s.role === "evidence");
  if (ep.sessions.length) showSession(Math.max(first, 0));
};

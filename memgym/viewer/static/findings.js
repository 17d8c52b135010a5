"use strict";
// Findings: the current claim with its verdict and runs (links open each run's page), the whole
// table with the current claim highlighted (a row click shows that claim), and the effects figure.
Memgym.views.findings = function (root, ep, key) {
  const el = Memgym.el;
  const f = ep.finding;
  const interval = (r) => r.effect_pp === null ? "–" : `${r.effect_pp.toFixed(1)} [${r.low.toFixed(1)}, ${r.high.toFixed(1)}]`;
  const runs = ep.runs.map((run) => el("li", {},
    run.exists ? el("a", { href: run.href, class: "run-link" }, run.path) : el("span", { class: "note" }, run.path + " (not found)")));
  const rows = ep.table.map((r, k) => el("tr", {
    class: "clickable verdict-row" + (k === key ? " selected" : ""), "data-id": r.id, "data-verdict": r.verdict,
    onclick: () => document.querySelector(`#episodes button[data-key="${k}"]`).click(),
  }, el("td", {}, r.benchmark), el("td", {}, r.claim), el("td", {}, r.paper), el("td", {}, interval(r)),
  el("td", {}, r.n), el("td", { class: "verdict " + r.verdict.replace(" ", "-") }, r.verdict)));
  root.append(
    el("h2", {}, f.claim),
    el("div", { class: "panel", id: "finding" },
      el("div", {}, "Verdict: ", el("b", { id: "verdict", class: "verdict " + f.verdict.replace(" ", "-") }, f.verdict)),
      el("div", {}, "Paper: ", f.paper),
      el("div", {}, "Ours (pp, 95% CI): ", el("b", { id: "effect" }, interval(f)), f.n ? ` over ${f.n} units` : "",
        f.ours ? el("span", { class: "note" }, " · " + f.ours) : null),
      f.detail ? el("div", { class: "note", id: "detail" }, f.detail) : null,
      el("div", {}, "Measured on:"),
      runs.length ? el("ul", { id: "runs" }, runs) : el("p", { class: "note", id: "runs" }, "no run")),
    el("h2", {}, "All findings"),
    Memgym.table(["benchmark", "claim", "paper", "ours (pp)", "n", "verdict"], rows, { id: "findings-table" }),
    ep.figure ? [el("h2", {}, "Effects beside the papers'"), el("img", { id: "findings-figure", src: ep.figure, style: "max-width: 100%" })] : null);
};

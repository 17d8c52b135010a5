"use strict";
// Boot: read the index, list the episodes, show the one named in the URL hash (#episode=K) or the first.
(async function () {
  const view = document.getElementById("view");
  const list = document.getElementById("episodes");
  let index;
  try {
    index = await Memgym.load("index", "data/index.js");
  } catch (error) {
    view.replaceChildren(Memgym.el("p", { class: "error" }, String(error)));
    return;
  }
  document.title = "memgym view: " + index.benchmark;
  document.getElementById("source").textContent = index.benchmark + " " + index.kind + ": " + index.source;
  const buttons = index.episodes.map((episode, key) =>
    Memgym.el("button", { "data-key": key, onclick: () => show(key) },
      episode.id, Memgym.el("span", { class: "label" }, episode.label)));
  list.replaceChildren(...buttons);

  async function show(key) {
    document.body.removeAttribute("data-ready");
    buttons.forEach((b, k) => b.classList.toggle("active", k === key));
    history.replaceState(null, "", "#episode=" + key);
    view.replaceChildren(Memgym.el("p", { class: "note" }, "Loading " + index.episodes[key].id + "…"));
    try {
      const data = await Memgym.load("episode-" + key, "data/episode-" + key + ".js");
      view.replaceChildren();
      Memgym.views[index.benchmark](view, data, key);
      document.body.setAttribute("data-ready", String(key));
    } catch (error) {
      view.replaceChildren(Memgym.el("p", { class: "error" }, String(error)));
    }
  }
  const match = /episode=(\d+)/.exec(location.hash);
  const first = match && Number(match[1]) < index.episodes.length ? Number(match[1]) : 0;
  if (index.episodes.length) show(first);
  else view.replaceChildren(Memgym.el("p", { class: "note" }, "No episodes."));
})();

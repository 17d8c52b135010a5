"use strict";
// DialogMem: top-down map with the trajectory, frame scrubber (RGB, depth, semantic), dialogue at
// the frames where it was said, task items with each memory's answer and scores.
Memgym.views.dialogmem = function (root, ep, key) {
  const el = Memgym.el;
  const frames = ep.frames;
  const media = (file) => "media/" + key + "/" + file;
  const memoryColours = ["#d62728", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22"];
  let current = 0;
  let selected = null;
  let timer = null;

  // ----- map -------------------------------------------------------------------------------------
  const mapImage = el("img", { id: "map-image", src: ep.map.image, alt: "top-down map" });
  const mapCanvas = el("canvas", { id: "map-canvas" });
  const toPx = (p) => [(p[0] - ep.map.origin[0]) * ep.map.ppm, (p[2] - ep.map.origin[1]) * ep.map.ppm];
  let labels = null;  // this redraw's label placer: labels that would overlap are moved or hidden
  function cross(ctx, p, colour, label) {
    const [x, y] = toPx(p);
    ctx.strokeStyle = colour; ctx.lineWidth = 3;
    ctx.beginPath(); ctx.moveTo(x - 7, y - 7); ctx.lineTo(x + 7, y + 7); ctx.moveTo(x + 7, y - 7); ctx.lineTo(x - 7, y + 7); ctx.stroke();
    ctx.fillStyle = colour; ctx.font = "12px sans-serif"; labels(ctx, label, x + 3, y);
  }
  function drawMap() {
    if (!mapImage.naturalWidth) return;
    mapCanvas.width = mapImage.naturalWidth; mapCanvas.height = mapImage.naturalHeight;
    labels = Memgym.labelPlacer(mapCanvas);
    const ctx = mapCanvas.getContext("2d");
    ctx.clearRect(0, 0, mapCanvas.width, mapCanvas.height);
    const pts = frames.map((f) => toPx(f.position));
    ctx.lineWidth = 1; ctx.strokeStyle = "rgba(60,60,200,0.25)";
    ctx.beginPath(); pts.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y))); ctx.stroke();
    for (let i = 0; i < current; i++) {  // walked so far: blue (start) to red (now), as the map image does
      const f = i / Math.max(frames.length - 2, 1);
      ctx.strokeStyle = `rgb(${Math.round(40 + 200 * f)},60,${Math.round(220 - 180 * f)})`; ctx.lineWidth = 3;
      ctx.beginPath(); ctx.moveTo(...pts[i]); ctx.lineTo(...pts[i + 1]); ctx.stroke();
    }
    for (const turn of ep.dialogue) {  // where each turn was said
      const [x, y] = pts[turn.step];
      ctx.fillStyle = turn.step <= current ? "#e07a00" : "rgba(224,122,0,0.3)";
      ctx.beginPath(); ctx.arc(x, y, 4, 0, 2 * Math.PI); ctx.fill();
    }
    const frame = frames[current];
    const [cx, cy] = pts[current];
    const fx = -Math.sin(frame.yaw), fz = -Math.cos(frame.yaw);  // forward = -z rotated by yaw
    const r = 0.35 * ep.map.ppm;
    ctx.fillStyle = "#e61e1e"; ctx.strokeStyle = "#000"; ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(cx + fx * r, cy + fz * r);
    ctx.lineTo(cx + (fz * 0.5 - fx * 0.5) * r, cy + (-fx * 0.5 - fz * 0.5) * r);
    ctx.lineTo(cx + (-fz * 0.5 - fx * 0.5) * r, cy + (fx * 0.5 - fz * 0.5) * r);
    ctx.closePath(); ctx.fill(); ctx.stroke();
    drawMemoryObjects(ctx);
    if (selected && selected.target) {
      const [tx, ty] = toPx(selected.target);
      ctx.strokeStyle = "#18794e"; ctx.lineWidth = 3;
      ctx.beginPath(); ctx.arc(tx, ty, 10, 0, 2 * Math.PI); ctx.stroke();
      ctx.fillStyle = "#18794e"; ctx.font = "bold 12px sans-serif"; labels(ctx, "true: " + selected.answer, tx + 6, ty + 4);
      ep.memories.forEach((memory, k) => {
        const result = selected.results[memory];
        if (result && result.predicted_position) {
          cross(ctx, result.predicted_position, memoryColours[k % memoryColours.length], memory);
        }
      });
    }
    // where the labels went, and how many found no free spot (read by the tests)
    mapCanvas.dataset.hiddenLabels = String(labels.hidden);
    mapCanvas.dataset.labelBoxes = JSON.stringify(labels.boxes.map((b) => [b.x, b.y, b.w, b.h].map(Math.round)));
  }
  mapImage.addEventListener("load", drawMap);

  // ----- frames ------------------------------------------------------------------------------------
  const images = ["rgb", "depth", "semantic"].map((kind) =>
    el("img", { id: "frame-" + kind, alt: kind, "data-kind": kind }));
  const slider = el("input", { id: "frame-slider", type: "range", min: 0, max: frames.length - 1, value: 0, step: 1 });
  const label = el("span", { id: "frame-label" });
  const play = el("button", { id: "play" }, "Play");
  slider.addEventListener("input", () => setFrame(Number(slider.value)));
  play.addEventListener("click", () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "Play"; return; }
    play.textContent = "Pause";
    timer = setInterval(() => {
      if (current >= frames.length - 1) { clearInterval(timer); timer = null; play.textContent = "Play"; return; }
      setFrame(current + 1);
    }, 125);
  });

  // ----- dialogue -----------------------------------------------------------------------------------
  const turnNodes = ep.dialogue.map((turn) =>
    el("div", { class: "turn", "data-turn": turn.turn_id, "data-step": turn.step, onclick: () => setFrame(turn.step) },
      el("span", { class: "who" }, turn.speaker), ` (frame ${turn.step}, ${turn.type}): `, turn.text));

  let imageTimer = null;
  function showImages() {  // the images of the frame the scrubber is at now
    imageTimer = null;
    images[0].src = media("rgb_" + current + ".jpg");
    images[1].src = media("depth_" + current + ".png");
    images[2].src = media("semantic_" + current + ".png");
  }

  function setFrame(index) {
    current = Math.max(0, Math.min(frames.length - 1, index));
    slider.value = current;
    const frame = frames[current];
    if (!imageTimer) imageTimer = setTimeout(showImages, 40);  // while dragging: at most 25 image sets a second
    const segment = ep.segments[frame.segment];
    label.textContent = `frame ${current} / ${frames.length - 1}` +
      (segment ? ` · segment ${segment.index} (goal: ${segment.category})` : "") + ` · ${frame.action}` +
      (frame.visible.length ? ` · sees ${frame.visible.join(", ")}` : "");
    turnNodes.forEach((node, k) => {
      const step = ep.dialogue[k].step;
      node.classList.toggle("future", step > current);
      node.classList.toggle("current", step === current);
    });
    const said = turnNodes.filter((node, k) => ep.dialogue[k].step === current);
    if (said.length) said[0].scrollIntoView({ block: "nearest" });
    drawMap();
  }

  // ----- items ---------------------------------------------------------------------------------------
  const detail = el("div", { id: "item-detail", class: "panel" }, el("span", { class: "note" }, "Click an item."));
  const scoreOf = (result) => result.scores.geodesic_success ?? result.scores.llm_match ?? result.scores.token_f1 ?? result.scores.reward;
  const itemRows = ep.items.map((item) => el("tr", { class: "clickable item", "data-item": item.item_id, onclick: () => selectItem(item) },
    el("td", {}, item.task), el("td", {}, item.prompt), el("td", {}, Memgym.fmt(item.answer)),
    ep.memories.map((memory) => {
      const result = item.results[memory];
      return el("td", {}, result ? Memgym.scoreCell(scoreOf(result)) : "–");
    })));

  function selectItem(item) {
    selected = item;
    itemRows.forEach((row) => row.classList.toggle("selected", row.dataset.item === item.item_id));
    const evidence = new Set(item.evidence_turns);
    turnNodes.forEach((node) => node.classList.toggle("evidence", evidence.has(Number(node.dataset.turn))));
    const rows = ep.memories.filter((m) => item.results[m]).map((memory) => {
      const r = item.results[memory];
      const colour = memoryColours[ep.memories.indexOf(memory) % memoryColours.length];
      return el("tr", { "data-memory": memory }, el("td", {}, el("span", { class: "swatch", style: "background: " + colour }), memory),
        el("td", { class: "prediction" }, r.error ? el("span", { class: "error" }, "error: " + r.error) : Memgym.fmt(r.prediction)),
        el("td", {}, Object.entries(r.scores).map(([k, v]) => el("span", { class: "tag" }, k + " ", Memgym.scoreCell(v)))),
        el("td", {}, r.predicted_position ? Memgym.fmt(r.predicted_position) : "–"));
    });
    detail.replaceChildren(
      el("div", {}, el("b", {}, item.item_id), " ", el("span", { class: "tag" }, item.task)),
      el("div", { class: "prompt" }, item.prompt),
      el("div", {}, "Gold answer: ", el("b", { id: "gold-answer" }, Memgym.fmt(item.answer)),
        item.target ? ` at ${Memgym.fmt(item.target)}` : ""),
      el("div", {}, Object.entries(item.annotations).map(([k, v]) => el("span", { class: "tag" }, k + ": " + Memgym.fmt(v)))),
      rows.length ? Memgym.table(["memory", "answer", "scores", "predicted location"], rows, { id: "item-results" })
        : el("p", { class: "note" }, "No results: this is a dataset; view an eval run folder to see the memories' answers."));
    if (item.evidence_turns.length) {
      const first = ep.dialogue.find((t) => t.turn_id === item.evidence_turns[0]);
      if (first) { setFrame(first.step); return; }
    }
    drawMap();
  }

  // ----- memory contents (saved by eval save_memory=true) ---------------------------------------------
  let shownMemory = null;
  const contentsPanel = el("div", { id: "memory-detail" });
  const frameChip = (frame) => el("button", { class: "tag frame-chip", "data-frame": frame, onclick: () => setFrame(frame) }, "frame " + frame);
  function showContents(memory) {
    shownMemory = memory;
    memoryTabs.forEach((tab) => tab.classList.toggle("active", tab.dataset.memory === memory));
    const c = ep.contents[memory];
    const parts = [];
    if (c.objects) {
      parts.push(el("h3", {}, `${c.objects.length} objects (drawn on the map)`),
        Memgym.table(["id", "label", "location", "frames"], c.objects.map((o) => el("tr", { class: "memory-object", "data-object": o.id },
          el("td", {}, o.id), el("td", {}, o.label), el("td", {}, Memgym.fmt(o.location)),
          el("td", {}, o.frames.length ? frameChip(o.frames[0]) : "–", o.frames.length > 1 ? ` … ${o.frames.length} frames` : "")))));
    }
    if (c.snapshots) {
      parts.push(el("h3", {}, `${c.snapshots.length} snapshots`),
        Memgym.table(["id", "frame", "objects", "linked turns"], c.snapshots.map((snap) => el("tr", { class: "snapshot", "data-snapshot": snap.id },
          el("td", {}, snap.id), el("td", {}, frameChip(snap.frame)), el("td", {}, snap.objects.join(", ")),
          el("td", {}, snap.turns.length ? snap.turns.map((t) => el("div", {}, t)) : "–")))));
    }
    if (c.frames) parts.push(el("h3", {}, `${c.frames.length} frames shown to the reasoner`), el("div", {}, c.frames.map(frameChip)));
    if (c.dialogue) parts.push(el("h3", {}, `${c.dialogue.length} dialogue lines kept`));
    if (!parts.length) parts.push(el("p", { class: "note" }, "This memory keeps none of: dialogue, frames, objects, snapshots."));
    contentsPanel.replaceChildren(el("div", {}, parts));
    drawMap();
  }
  const memoryTabs = Object.keys(ep.contents).map((memory) =>
    el("button", { class: "memory-tab", "data-memory": memory, onclick: () => showContents(memory) }, memory));
  function drawMemoryObjects(ctx) {
    const objects = shownMemory && ep.contents[shownMemory].objects;
    if (!objects) return;
    ctx.font = "10px sans-serif";
    for (const o of objects) {
      const [x, y] = toPx(o.location);
      ctx.fillStyle = "rgba(20,120,200,0.9)"; ctx.fillRect(x - 3, y - 3, 6, 6);
      ctx.fillStyle = "#0b3d66"; labels(ctx, o.label, x, y);
    }
  }

  // ----- layout -------------------------------------------------------------------------------------
  const links = Object.entries(ep.links).map(([memory, c]) =>
    el("li", {}, `${memory}: ${c.correct} of ${c.linkable} linkable turns linked to a snapshot showing their object (${c.linked} of ${c.turns} turns linked)`));
  root.append(
    el("h2", {}, `Episode ${ep.id}`, el("span", { class: "note" }, ` · scene ${ep.scene} · ${frames.length} frames · ` +
      `${ep.dialogue.length} turns · residents: ${ep.residents.map((r) => r.name).join(", ")}`)),
    el("div", { class: "row" },
      el("div", { class: "panel" }, el("div", { class: "map-wrap" }, mapImage, mapCanvas)),
      el("div", { class: "panel", style: "flex: 1; min-width: 420px" },
        el("div", { class: "frames" }, images.map((img) => el("figure", {}, img, el("figcaption", {}, img.alt)))),
        el("div", { class: "scrubber" }, play, slider), label,
        el("h2", {}, "Dialogue"), el("div", { class: "turns", id: "turns" }, turnNodes))),
    el("h2", {}, "Task items"),
    el("div", { class: "row" },
      el("div", { class: "panel", style: "flex: 2; min-width: 480px; max-height: 420px; overflow-y: auto" },
        Memgym.table(["task", "prompt", "gold", ...ep.memories], itemRows, { id: "items" })),
      el("div", { style: "flex: 1; min-width: 320px" }, detail)),
    el("h2", {}, "Memory contents"),
    el("div", { class: "panel", id: "memory-contents" },
      links.length ? el("ul", {}, links) : null,
      memoryTabs.length ? [el("div", {}, memoryTabs), contentsPanel]
        : el("p", { class: "note" }, "Not saved: run the eval with save_memory=true to see what each memory held " +
          "(dialogue lines, frames, objects, snapshots).")));
  if (memoryTabs.length) showContents(memoryTabs[0].dataset.memory);
  setFrame(0);
};

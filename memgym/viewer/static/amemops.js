"use strict";
// AMemOps: stereo spectrogram with the events and queries beneath, audio playback with a playhead
// and a time scrubber, and each model's answer per query.
Memgym.views.amemops = function (root, ep) {
  const el = Memgym.el;
  const seconds = ep.frames / ep.frame_rate;
  const lanes = { target: 0, interferer: 1, distractor: 2, query: 3 };
  const colours = { target: "#1f77b4", interferer: "#ff7f0e", distractor: "#7f7f7f", query: "#d62728" };
  let selected = null;
  let time = 0;

  const audio = ep.audio ? el("audio", { id: "stream-audio", controls: true, preload: "auto", src: ep.audio }) : null;
  const playhead = el("div", { id: "playhead" });
  const spectrogram = ep.spectrogram ? el("img", { id: "spectrogram", src: ep.spectrogram, alt: "spectrogram" }) : null;
  const laneCanvas = el("canvas", { id: "lanes", height: 130 });
  const slider = el("input", { id: "time-slider", type: "range", min: 0, max: ep.frames - 1, value: 0, step: 1 });
  const timeLabel = el("span", { id: "time-label" });
  const detail = el("div", { id: "query-detail", class: "panel" }, el("span", { class: "note" }, "Click a query."));

  function drawLanes() {
    const width = laneCanvas.clientWidth || 800;
    laneCanvas.width = width;
    const ctx = laneCanvas.getContext("2d");
    const x = (frame) => (frame / ep.frames) * width;
    ctx.clearRect(0, 0, width, laneCanvas.height);
    ctx.font = "10px sans-serif";
    for (const [role, lane] of Object.entries(lanes)) {
      ctx.fillStyle = "#555"; ctx.fillText(role, 2, lane * 30 + 12);
    }
    for (const event of ep.events) {
      const lane = lanes[event.role];
      const chosen = selected && event.query_id === selected.id;
      ctx.fillStyle = colours[event.role];
      ctx.globalAlpha = chosen || !selected ? 1 : 0.55;
      ctx.fillRect(x(event.onset), lane * 30 + 15, Math.max(2, x(event.frames)), 12);
      if (event.role !== "query") {
        ctx.fillStyle = "#000"; ctx.globalAlpha = 1;
        ctx.fillText(`${event.identity} (${event.gain}, ${event.pan})`, x(event.onset) + 1, lane * 30 + 25);
      }
    }
    ctx.globalAlpha = 1;
    for (const query of ep.queries) {
      ctx.strokeStyle = selected && selected.id === query.id ? "#000" : "rgba(214,39,40,0.6)";
      ctx.lineWidth = selected && selected.id === query.id ? 3 : 1;
      ctx.beginPath(); ctx.moveTo(x(query.end + 1), 0); ctx.lineTo(x(query.end + 1), laneCanvas.height); ctx.stroke();
    }
  }

  function setTime(t, seek) {
    time = Math.max(0, Math.min(seconds, t));
    playhead.style.left = (100 * time) / seconds + "%";
    slider.value = Math.min(ep.frames - 1, Math.floor(time * ep.frame_rate + 1e-3));  // audio clocks round down
    timeLabel.textContent = `${time.toFixed(2)} s / ${seconds.toFixed(2)} s (frame ${slider.value})`;
    if (seek && audio) audio.currentTime = time;
  }
  slider.addEventListener("input", () => setTime(Number(slider.value) / ep.frame_rate, true));
  const seekFromClick = (event) => {
    const box = event.currentTarget.getBoundingClientRect();
    setTime(((event.clientX - box.left) / box.width) * seconds, true);
  };
  laneCanvas.addEventListener("click", seekFromClick);
  if (spectrogram) spectrogram.addEventListener("click", seekFromClick);
  if (audio) {
    const follow = () => { setTime(audio.currentTime, false); if (!audio.paused) requestAnimationFrame(follow); };
    audio.addEventListener("play", () => requestAnimationFrame(follow));
    audio.addEventListener("timeupdate", () => setTime(audio.currentTime, false));
  }

  const queryRows = ep.queries.map((query) => el("tr", { class: "clickable query", "data-query": query.id, onclick: () => selectQuery(query) },
    el("td", {}, query.id), el("td", {}, query.type), el("td", {}, query.attribute), el("td", {}, query.identity || "–"),
    el("td", {}, ((query.end + 1) / ep.frame_rate).toFixed(2) + " s"), el("td", {}, query.answer_label),
    ep.models.map((model) => {
      const result = query.results.find((r) => r.model === model);
      return el("td", {}, result ? Memgym.scoreCell(result.correct) : "–");
    })));

  function selectQuery(query) {
    selected = query;
    queryRows.forEach((row) => row.classList.toggle("selected", row.dataset.query === query.id));
    detail.replaceChildren(el("div", {},
      el("div", {}, el("b", {}, query.id), ` · ${query.type} (${query.operation}) · asks the ${query.attribute} of `,
        el("b", {}, query.identity || "–"), query.delay_s !== null ? ` · delay ${query.delay_s.toFixed(2)} s` : ""),
      el("div", {}, "Gold answer: ", el("b", { id: "gold-answer" }, query.answer_label)),
      query.results.length
        ? Memgym.table(["model", "answer", "correct"], query.results.map((r) => el("tr", { "data-model": r.model },
          el("td", {}, r.model), el("td", { class: "prediction" }, r.label), el("td", {}, Memgym.scoreCell(r.correct)))),
        { id: "query-results" })
        : el("p", { class: "note" }, "No answers: this is a stream set; view an eval run folder to see the models' answers.")));
    setTime(query.onset / ep.frame_rate, true);
    drawLanes();
  }

  const accuracy = ep.models.map((model) => {
    const results = ep.queries.map((q) => q.results.find((r) => r.model === model)).filter((r) => r);
    const right = results.filter((r) => r.correct).length;
    return el("span", { class: "tag" }, `${model}: ${right}/${results.length}`);
  });
  root.append(
    el("h2", {}, `Stream ${ep.id}`, el("span", { class: "note" },
      ` · ${seconds.toFixed(2)} s · ${ep.events.length} events · ${ep.queries.length} queries · recordings ${ep.recordings}`)),
    el("div", { class: "panel" },
      ep.spectrogram ? el("div", { class: "note" }, "log-mel: right channel (top), left channel (bottom)")
        : el("p", { class: "note" }, "Symbolic stream: no audio or spectrogram."),
      el("div", { class: "spectro-wrap" }, spectrogram, laneCanvas, playhead),
      el("div", { class: "scrubber" }, audio, slider), timeLabel),
    el("h2", {}, "Queries"),
    accuracy.length ? el("div", { id: "accuracy" }, "Correct on this stream: ", accuracy) : null,
    el("div", { class: "row" },
      el("div", { class: "panel", style: "flex: 2; min-width: 480px" },
        Memgym.table(["query", "type", "attribute", "source", "at", "gold", ...ep.models], queryRows, { id: "queries" })),
      el("div", { style: "flex: 1; min-width: 320px" }, detail)));
  drawLanes();
  setTime(0, false);
};

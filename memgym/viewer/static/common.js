"use strict";
// Shared helpers of the memgym viewer page: data loading, element building, number formatting.
const Memgym = { views: {}, waiting: {} };

// Data files are scripts calling memgymData(name, value) (they load from disk as well as a server).
window.memgymData = function (name, value) {
  const resolve = Memgym.waiting[name];
  if (resolve) { delete Memgym.waiting[name]; resolve(value); }
};

Memgym.load = function (name, src) {
  return new Promise((resolve, reject) => {
    Memgym.waiting[name] = resolve;
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => script.remove();
    script.onerror = () => { delete Memgym.waiting[name]; script.remove(); reject(new Error("cannot load " + src)); };
    document.head.appendChild(script);
  });
};

// el("div", {class: "x", onclick: f}, child, "text", ...)
Memgym.el = function (tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
};

Memgym.fmt = function (value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (Array.isArray(value)) return value.map(Memgym.fmt).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
};

// A score cell: green for a full score, red for zero.
Memgym.scoreCell = function (value) {
  const cls = value === null || value === undefined ? "" : value >= 1 ? "ok" : value <= 0 ? "bad" : "";
  return Memgym.el("span", { class: cls }, Memgym.fmt(value));
};

Memgym.table = function (headers, rows, attrs) {
  return Memgym.el("table", attrs || {},
    Memgym.el("thead", {}, Memgym.el("tr", {}, headers.map((h) => Memgym.el("th", {}, h)))),
    Memgym.el("tbody", {}, rows));
};

// Canvas labels that do not overlap: place(ctx, text, x, y) tries a few offsets around the point
// (right-below, right-above, left-below, left-above, further out) and draws the label at the
// first spot that overlaps no label placed since the placer was made and stays on the canvas;
// a label with no free spot is hidden. Returns whether it was drawn. Make one placer per redraw.
Memgym.labelPlacer = function (canvas) {
  const placed = [];
  const free = (box) => box.x >= 0 && box.y >= 0 && box.x + box.w <= canvas.width && box.y + box.h <= canvas.height &&
    placed.every((p) => box.x + box.w <= p.x || p.x + p.w <= box.x || box.y + box.h <= p.y || p.y + p.h <= box.y);
  const place = function (ctx, text, x, y) {
    const w = ctx.measureText(text).width + 2, h = parseInt(ctx.font, 10) + 2 || 14;
    const offsets = [[6, 2], [6, -h - 2], [-w - 6, 2], [-w - 6, -h - 2], [6, h + 2], [6, -2 * h - 4], [-w / 2, h + 6], [-w / 2, -2 * h - 6]];
    for (const [dx, dy] of offsets) {
      const box = { x: x + dx, y: y + dy, w, h };
      if (free(box)) {
        placed.push(box);
        ctx.textBaseline = "top";
        ctx.fillText(text, box.x + 1, box.y + 1);
        ctx.textBaseline = "alphabetic";
        return true;
      }
    }
    place.hidden += 1;
    return false;
  };
  place.hidden = 0;
  place.boxes = placed;
  return place;
};

// Drawing the scene Python sent: clusters, edges, nodes (each an element with data-key, the
// selection key clicks report), and the marks of the selection and of a highlighted finding.

import { el } from "./dom.js";
import { border, centre, clusterBox, edgeEnd } from "./geometry.js";
import { drawLint } from "./lint.js";
import { fit, stageHeight } from "./viewport.js";
import { bezier, drawOps } from "./xdot.js";

function drawNode(ctx, n, layer) {
  const g = el("g", { class: "cc-node", "data-key": `node:${n.id}`, "data-node": n.id }, layer);
  const [x, y] = centre(ctx, n.id);
  g.setAttribute("transform", `translate(${x - n.x},${y - n.y})`);
  el("rect", { x: n.x - n.w / 2, y: n.y - n.h / 2, width: n.w, height: n.h, fill: "transparent" }, g);
  drawOps(n.ops, g, ctx.scene.flip);
  if (n.declared) el("circle", { class: "cc-handle", cx: n.x + n.w / 2 + 3, cy: n.y, r: 5.5 }, g);
  n.g = g;
}

// An edge (in place of `old` when redrawn during a drag).
export function drawEdge(ctx, e, layer, old) {
  const flip = ctx.scene.flip;
  const g = el("g", { class: "cc-edge", "data-key": e.id }, null);
  if (old) layer.replaceChild(g, old); else layer.appendChild(g);
  const a = edgeEnd(ctx, e, "tail"), b = edgeEnd(ctx, e, "head");
  if (a && b && (a.moved || b.moved)) {
    // a dragged end: a straight edge between the current centres, clipped at the shapes
    const p = border(a, a.c, b.c[0], b.c[1]), q = border(b, b.c, a.c[0], a.c[1]);
    const colour = (e.ops.find(o => o.op === "c") || { color: "#555" }).color;
    const dash = (e.ops.find(o => o.op === "S" && o.style !== "solid") || {}).style;
    el("path", { class: "cc-hit", d: `M${p[0]},${p[1]} L${q[0]},${q[1]}` }, g);
    el("line", { x1: p[0], y1: p[1], x2: q[0], y2: q[1], stroke: colour, "stroke-width": 1.3,
                 "stroke-dasharray": dash === "dashed" ? "5,2" : dash === "dotted" ? "1,5" : null }, g);
    const ang = Math.atan2(q[1] - p[1], q[0] - p[0]), s = 7;
    const h1 = [q[0] - s * Math.cos(ang - 0.4), q[1] - s * Math.sin(ang - 0.4)];
    const h2 = [q[0] - s * Math.cos(ang + 0.4), q[1] - s * Math.sin(ang + 0.4)];
    el("polygon", { points: `${q.join(",")} ${h1.join(",")} ${h2.join(",")}`, fill: colour, stroke: colour }, g);
    const text = e.label.find(o => o.op === "T");
    if (text) {
      const lg = el("g", {}, g);
      lg.setAttribute("transform", `translate(${(p[0] + q[0]) / 2 - text.pt[0]},${(p[1] + q[1]) / 2 - (flip - text.pt[1]) - 4})`);
      drawOps(e.label, lg, flip);
    }
  } else {
    const curve = e.ops.find(o => o.op === "b" || o.op === "B");
    if (curve) el("path", { class: "cc-hit", d: bezier(curve.points.map(p => [p[0], flip - p[1]])) }, g);
    drawOps(e.ops, g, flip);
    drawOps(e.label, g, flip);
  }
  e.g = g;
}

// A group's frame (in place of `old` when redrawn during a drag).
export function drawCluster(ctx, c, layer, old) {
  const flip = ctx.scene.flip;
  const g = el("g", { class: "cc-cluster", "data-key": `group:${c.id}` }, null);
  if (old) layer.replaceChild(g, old); else layer.appendChild(g);
  const { box, movedMember } = clusterBox(ctx, c);
  const [x0, y0, x1, y1] = box;
  if (movedMember) {
    // a member was dragged: the frame follows its members, in graphviz's colours
    const fill = [...c.ops].reverse().find(o => o.op === "C"), pen = c.ops.find(o => o.op === "c");
    el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 6, fill: fill ? fill.color : "#F5F7FA",
                 stroke: pen ? pen.color : "#90A4AE", "stroke-width": 1.2 }, g);
    const lg = el("g", {}, g);
    lg.setAttribute("transform", `translate(${x0 - c.bbox[0]},${y0 - c.bbox[1]})`);
    drawOps(c.label, lg, flip);
  } else {
    drawOps(c.ops, g, flip);
    drawOps(c.label, g, flip);
  }
  el("rect", { class: "cc-cluster-ring", x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 6, fill: "none" }, g);
  c.g = g;
}

// The whole picture, from the model's scene (JSON text).
export function draw(ctx) {
  const text = ctx.model.get("scene");
  if (!text) return;
  const scene = ctx.scene = JSON.parse(text);
  ctx.view.textContent = "";
  ctx.byId = {}; ctx.pos = {};
  for (const n of scene.nodes) {
    ctx.byId[n.id] = n;
    ctx.pos[n.id] = scene.layout[n.id] ? [...scene.layout[n.id]] : [n.x, n.y];
  }
  const layer = cls => el("g", { class: cls }, ctx.view);
  ctx.layers = { bg: layer("cc-bg"), clusters: layer("cc-clusters"), edges: layer("cc-edges"),
                 nodes: layer("cc-nodes"), marks: layer("cc-marks") };
  drawOps(scene.background, ctx.layers.bg, scene.flip);   // white page and the caption (name, findings, legend)
  for (const c of scene.clusters) drawCluster(ctx, c, ctx.layers.clusters);
  for (const e of scene.edges) drawEdge(ctx, e, ctx.layers.edges);
  for (const n of scene.nodes) drawNode(ctx, n, ctx.layers.nodes);
  ctx.stage.style.height = `${stageHeight(ctx)}px`;
  if (!ctx.userView) requestAnimationFrame(() => fit(ctx, true));
  ctx.buttons.relayout.disabled = !Object.keys(scene.layout).length;
  drawLint(ctx);
  marks(ctx);
}

// The selection's ring, a highlighted finding's flash, the toolbar's undo/redo and message.
export function marks(ctx) {
  const { model, view, layers } = ctx;
  layers.marks.textContent = "";
  const sel = model.get("selection"), flash = model.get("highlight");
  view.querySelectorAll(".selected, .flash").forEach(n => n.classList.remove("selected", "flash"));
  for (const [key, cls] of [[sel, "selected"], [flash, "flash"]]) {
    if (!key) continue;
    view.querySelectorAll(`[data-key="${CSS.escape(key)}"]`).forEach(n => n.classList.add(cls));
    if (key.startsWith("node:") && ctx.byId[key.slice(5)]) {
      const n = ctx.byId[key.slice(5)], [x, y] = centre(ctx, n.id);
      el("rect", { class: cls === "selected" ? "cc-ring" : "cc-flash", x: x - n.w / 2 - 5, y: y - n.h / 2 - 5,
                   width: n.w + 10, height: n.h + 10, rx: 8 }, layers.marks);
    }
  }
  const [undo, redo] = model.get("history") || [0, 0];
  ctx.buttons.undo.disabled = !undo; ctx.buttons.redo.disabled = !redo;
  const [text, kind] = (model.get("status") || "").split("\u0000");
  ctx.status.textContent = text || ""; ctx.status.className = `cc-status ${kind || ""}`;
}

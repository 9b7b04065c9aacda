// Zoom and pan: the transform ctx.tr = {x, y, k} of the picture inside the stage.

import { extent } from "./geometry.js";

const MIN_READABLE = 0.85;   // the first view never shrinks text below this (labels stay readable)

export function apply(ctx) {
  const { x, y, k } = ctx.tr;
  ctx.view.setAttribute("transform", `translate(${x},${y}) scale(${k})`);
  ctx.model.set("zoom", Math.round(k * 1000) / 1000);
  ctx.model.save_changes();
}

// A point of the page (clientX, clientY) in the picture's coordinates.
export function toScene(ctx, cx, cy) {
  const r = ctx.svg.getBoundingClientRect(), { x, y, k } = ctx.tr;
  return [(cx - r.left - x) / k, (cy - r.top - y) / k];
}

// Tall enough to show the graph at its natural size, up to a screenful (then pan or zoom).
export function stageHeight(ctx) {
  return Math.max(240, Math.min(640, (ctx.scene ? extent(ctx)[3] : 200) * 1.1 + 24));
}

// Show the whole graph; with `floor`, never below a readable size.
export function fit(ctx, floor) {
  if (!ctx.scene) return;
  const [ex, ey, ew, eh] = extent(ctx);
  const w = ctx.stage.clientWidth || 800, h = ctx.stage.clientHeight || stageHeight(ctx);
  let k = Math.min((w - 20) / ew, (h - 20) / eh, 1.25);
  if (floor) k = Math.max(k, MIN_READABLE);
  ctx.tr = { k, x: Math.max(10, (w - ew * k) / 2) - ex * k, y: Math.max(10, (h - eh * k) / 2) - ey * k };
  apply(ctx);
}

// The wheel zooms around the pointer.
export function zoomAt(ctx, ev) {
  const r = ctx.svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top, tr = ctx.tr;
  const k = Math.min(4, Math.max(0.15, tr.k * Math.exp(-ev.deltaY * 0.0015)));
  ctx.tr = { k, x: mx - (mx - tr.x) * k / tr.k, y: my - (my - tr.y) * k / tr.k };
  apply(ctx);
}

// The pointer on the picture: click selects, drag moves a node (or, from its handle, draws a
// new edge), drag on the background pans, double-click adds a node, the wheel zooms, hovering
// shows what a node, edge or group is.

import { el, html } from "./dom.js";
import { centre } from "./geometry.js";
import { drawCluster, drawEdge, marks } from "./picture.js";
import { closePopup, roleChooser, typeChooser } from "./popups.js";
import { apply, toScene, zoomAt } from "./viewport.js";

const keyOf = target => { const k = target.closest && target.closest("[data-key]"); return k ? k.dataset.key : null; };

function begin(ctx, ev) {
  if (ev.button !== 0) return;
  ctx.userView = true;
  ctx.root.focus({ preventScroll: true });
  closePopup(ctx);
  const key = keyOf(ev.target);
  const start = { x: ev.clientX, y: ev.clientY };
  if (ev.target.classList.contains("cc-handle")) {
    const id = ev.target.parentNode.dataset.node, c = centre(ctx, id), x = c[0] + ctx.byId[id].w / 2;
    ctx.gesture = { kind: "connect", source: `node:${id}`,
                    line: el("line", { class: "cc-temp", x1: x, y1: c[1], x2: x, y2: c[1] }, ctx.layers.marks) };
  } else if (key && key.startsWith("node:")) {
    const id = key.slice(5);
    ctx.gesture = { kind: "node", id, start, origin: [...centre(ctx, id)], dragging: false };
  } else if (key && key.startsWith("edge:")) {
    ctx.gesture = { kind: "click", key, start };
  } else {
    ctx.gesture = { kind: "pan", key, start, origin: { ...ctx.tr }, panning: false };
  }
  ctx.svg.setPointerCapture(ev.pointerId);
  ev.preventDefault();
}

// A dragged node moves with its group's frame and its edges.
function dragNode(ctx, g, dx, dy) {
  g.dragging = true;
  const n = ctx.byId[g.id], { scene, layers } = ctx;
  ctx.pos[n.id] = [g.origin[0] + dx / ctx.tr.k, g.origin[1] + dy / ctx.tr.k];
  n.g.setAttribute("transform", `translate(${ctx.pos[n.id][0] - n.x},${ctx.pos[n.id][1] - n.y})`);
  if (!n.g.classList.contains("dragging")) { n.g.classList.add("dragging"); layers.nodes.appendChild(n.g); }
  const groups = scene.clusters.filter(c => c.members.includes(n.id));
  for (const c of groups) drawCluster(ctx, c, layers.clusters, c.g);
  const ids = new Set(groups.map(c => c.id));
  for (const e of scene.edges)
    if (e.tail === n.id || e.head === n.id || ids.has(e.tailGroup) || ids.has(e.headGroup)) drawEdge(ctx, e, layers.edges, e.g);
  marks(ctx);
}

function move(ctx, ev) {
  const g = ctx.gesture;
  if (!g) { hover(ctx, ev); return; }
  ctx.tooltip.style.display = "none";
  const dx = ev.clientX - (g.start ? g.start.x : 0), dy = ev.clientY - (g.start ? g.start.y : 0);
  if (g.kind === "connect") {
    const [x, y] = toScene(ctx, ev.clientX, ev.clientY);
    g.line.setAttribute("x2", x); g.line.setAttribute("y2", y);
  } else if (g.kind === "node" && (g.dragging || Math.hypot(dx, dy) > 4)) {
    dragNode(ctx, g, dx, dy);
  } else if (g.kind === "pan" && (g.panning || Math.hypot(dx, dy) > 4)) {
    g.panning = true;
    ctx.stage.classList.add("panning");
    ctx.tr = { ...g.origin, x: g.origin.x + dx, y: g.origin.y + dy };
    apply(ctx);
  }
}

function end(ctx, ev) {
  const g = ctx.gesture; ctx.gesture = null;
  ctx.stage.classList.remove("panning");
  if (!g) return;
  if (g.kind === "connect") {
    g.line.remove();
    const under = document.elementFromPoint(ev.clientX, ev.clientY);
    const target = under && ctx.stage.contains(under) ? keyOf(under) : null;
    if (target && (target.startsWith("node:") || target.startsWith("group:")) && (ctx.byId[target.slice(5)] || target.startsWith("group:")))
      roleChooser(ctx, g.source, target, ev.clientX, ev.clientY);
  } else if (g.kind === "node") {
    if (g.dragging) {
      const [x, y] = ctx.pos[g.id];
      ctx.send({ type: "move", node: g.id, x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10 });
    } else ctx.send({ type: "select", target: `node:${g.id}` });
  } else if (g.kind === "click") {
    ctx.send({ type: "select", target: g.key });
  } else if (g.kind === "pan" && !g.panning) {
    ctx.send({ type: "select", target: g.key && g.key.startsWith("group:") ? g.key : "" });
  }
}

function hover(ctx, ev) {
  const key = keyOf(ev.target), { scene, tooltip } = ctx;
  let lines = null;
  if (key && key.startsWith("node:") && ctx.byId[key.slice(5)]) lines = ctx.byId[key.slice(5)].hover;
  else if (key && key.startsWith("edge:")) lines = (scene.edges.find(e => e.id === key) || {}).hover;
  else if (key && key.startsWith("group:")) lines = (scene.clusters.find(c => `group:${c.id}` === key) || {}).tooltip;
  if (!lines || !lines.length) { tooltip.style.display = "none"; return; }
  tooltip.textContent = "";
  lines.forEach(t => html("div", "", tooltip, t));
  const r = ctx.stage.getBoundingClientRect();
  tooltip.style.left = `${Math.min(ev.clientX - r.left + 14, r.width - 250)}px`;
  tooltip.style.top = `${ev.clientY - r.top + 14}px`;
  tooltip.style.display = "block";
}

export function listenToPointer(ctx) {
  const svg = ctx.svg;
  svg.addEventListener("pointerdown", ev => begin(ctx, ev));
  svg.addEventListener("pointermove", ev => move(ctx, ev));
  svg.addEventListener("pointerup", ev => end(ctx, ev));
  svg.addEventListener("pointerleave", () => { ctx.tooltip.style.display = "none"; });
  svg.addEventListener("dblclick", ev => {
    const key = keyOf(ev.target);
    if (key && !key.startsWith("group:")) return;
    const [x, y] = toScene(ctx, ev.clientX, ev.clientY);
    typeChooser(ctx, x, y, ev.clientX, ev.clientY);
  });
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    ctx.userView = true;
    zoomAt(ctx, ev);
  }, { passive: false });
}

// The Designer's canvas (an anywidget ES module, shipped in the package: no build, no network).
//
// It replays the drawing operations graphviz computed (toolkit/widgets/canvas_scene.py) and
// turns gestures into messages for Python, which changes the definition and sends a new
// scene back. Nothing here edits the definition: every gesture is a Designer method.
//   click              -> {type: "select", target}        drag a node       -> {type: "move", node, x, y}
//   drag from handle   -> {type: "connect", source, target, role}
//   double-click bg    -> {type: "add_node", node_type, node_id, x, y}
//   Delete/Backspace   -> {type: "delete"}                  Ctrl/Cmd+Z (+Shift), Ctrl+Y -> undo / redo
//   click a finding    -> {type: "finding", index}         re-layout -> {type: "relayout"}

const SVG = "http://www.w3.org/2000/svg";
const MIN_READABLE = 0.85;   // the first view never shrinks text below this (labels stay readable)

function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, cls, parent, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// Replay graphviz's xdot operations (c/C colours, S style, F font, t bold, E/e P/p L B/b T).
// graphviz measures y upward: each y becomes flip - y.
function drawOps(ops, parent, flip) {
  const st = { pen: "#000", fill: "none", width: 1, dash: null, size: 14, face: "Helvetica", bold: false,
               italic: false, invis: false };
  for (const op of ops || []) {
    switch (op.op) {
      case "c": st.pen = op.color; break;
      case "C": st.fill = op.color; break;
      case "F": st.size = op.size; st.face = op.face; break;
      case "t": st.bold = !!(op.fontchar & 1); st.italic = !!(op.fontchar & 2); break;
      case "S": {
        const s = op.style;
        if (s === "dashed") st.dash = "5,2";
        else if (s === "dotted") st.dash = "1,5";
        else if (s === "solid") st.dash = null;
        else if (s === "invis" || s === "invisible") st.invis = true;
        else if (s.startsWith("setlinewidth(")) st.width = parseFloat(s.slice(13));
        break;
      }
      default: drawShape(op, st, parent, flip);
    }
  }
}

function stroke(st, filled) {
  return { stroke: st.pen, "stroke-width": st.width, "stroke-dasharray": st.dash,
           fill: filled ? st.fill : "none" };
}

function drawShape(op, st, parent, flip) {
  if (st.invis) return;
  const points = (op.points || []).map(p => [p[0], flip - p[1]]);
  const pts = points.map(p => p.join(",")).join(" ");
  if (op.op === "E" || op.op === "e") {
    const [cx, cy, rx, ry] = op.rect;
    el("ellipse", { cx, cy: flip - cy, rx, ry, ...stroke(st, op.op === "E") }, parent);
  } else if (op.op === "P" || op.op === "p") {
    el("polygon", { points: pts, ...stroke(st, op.op === "P") }, parent);
  } else if (op.op === "L") {
    el("polyline", { points: pts, ...stroke(st, false) }, parent);
  } else if (op.op === "B" || op.op === "b") {
    el("path", { d: bezier(points), ...stroke(st, op.op === "b") }, parent);
  } else if (op.op === "T") {
    const anchor = { l: "start", c: "middle", r: "end" }[op.align] || "middle";
    const t = el("text", { x: op.pt[0], y: flip - op.pt[1], "text-anchor": anchor, "font-size": st.size,
                           "font-family": st.face.includes("Times") ? "Helvetica,Arial,sans-serif" : st.face,
                           "font-weight": st.bold ? "bold" : null, "font-style": st.italic ? "italic" : null,
                           fill: st.pen }, parent);
    t.textContent = op.text;
  }
}

function bezier(points) {
  let d = `M${points[0][0]},${points[0][1]}`;
  for (let i = 1; i + 2 < points.length; i += 3)
    d += ` C${points[i][0]},${points[i][1]} ${points[i + 1][0]},${points[i + 1][1]} ${points[i + 2][0]},${points[i + 2][1]}`;
  return d;
}

// Where the line from a node's centre towards (tx, ty) leaves its box or ellipse.
function border(n, c, tx, ty) {
  const dx = tx - c[0], dy = ty - c[1];
  if (!dx && !dy) return c;
  const hw = n.w / 2, hh = n.h / 2;
  let t;
  if (n.shape === "ellipse") t = 1 / Math.sqrt((dx * dx) / (hw * hw) + (dy * dy) / (hh * hh));
  else t = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return [c[0] + dx * t, c[1] + dy * t];
}

function render({ model, el: host }) {
  const root = html("div", "collab-canvas", host);
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");   // JupyterLab leaves our keys alone
  const bar = html("div", "cc-toolbar", root);
  const button = (label, title, cls) => { const b = html("button", cls, bar, label); b.title = title; return b; };
  const fitButton = button("Fit", "show the whole graph", "cc-fit");
  const relayoutButton = button("Re-layout", "forget dragged positions: graphviz places every node", "cc-relayout");
  const undoButton = button("↶ Undo", "undo the last change (Ctrl/Cmd+Z)", "cc-undo");
  const redoButton = button("↷ Redo", "redo (Ctrl/Cmd+Shift+Z or Ctrl+Y)", "cc-redo");
  html("span", "cc-hint", bar,
       "click selects · drag a node to move it, from its ● to connect · double-click the background to add · " +
       "Del removes · wheel zooms · drag the background to pan");
  const status = html("span", "cc-status", bar);
  const stage = html("div", "cc-stage", root);
  const svg = el("svg", { class: "cc-svg" }, stage);
  const view = el("g", { class: "cc-view" }, svg);
  const tooltip = html("div", "cc-tooltip", stage);
  const popup = html("div", "cc-popup", stage);
  const lint = html("div", "cc-lint collab-designer-lint", root);

  // userView: the person has used the canvas, so redraws keep the view where it is (a node added by a
  // double-click appears under the pointer); until then (changes made from code) every redraw fits
  let scene = null, byId = {}, tr = { x: 0, y: 0, k: 1 }, userView = false;
  let pos = {};          // node id -> current centre (layout override or graphviz's)
  let gesture = null;

  const send = msg => model.send(msg);
  const apply = () => {
    view.setAttribute("transform", `translate(${tr.x},${tr.y}) scale(${tr.k})`);
    model.set("zoom", Math.round(tr.k * 1000) / 1000);
    model.save_changes();
  };
  const toScene = (cx, cy) => {
    const r = svg.getBoundingClientRect();
    return [(cx - r.left - tr.x) / tr.k, (cy - r.top - tr.y) / tr.k];
  };
  // tall enough to show the graph at its natural size, up to a screenful (then pan or zoom)
  const stageHeight = () => Math.max(240, Math.min(640, (scene ? extent()[3] : 200) * 1.1 + 24));

  // The picture's extent: graphviz's page plus any node dragged outside it.
  function extent() {
    let [x0, y0, x1, y1] = [0, 0, scene.width, scene.height];
    for (const n of scene.nodes) {
      const [x, y] = centre(n.id);
      x0 = Math.min(x0, x - n.w / 2 - 10); y0 = Math.min(y0, y - n.h / 2 - 10);
      x1 = Math.max(x1, x + n.w / 2 + 10); y1 = Math.max(y1, y + n.h / 2 + 10);
    }
    return [x0, y0, x1 - x0, y1 - y0];
  }

  function fit(floor) {
    if (!scene) return;
    const [ex, ey, ew, eh] = extent();
    const w = stage.clientWidth || 800, h = stage.clientHeight || stageHeight();
    let k = Math.min((w - 20) / ew, (h - 20) / eh, 1.25);
    if (floor) k = Math.max(k, MIN_READABLE);
    tr = { k, x: Math.max(10, (w - ew * k) / 2) - ex * k, y: Math.max(10, (h - eh * k) / 2) - ey * k };
    apply();
  }

  function centre(id) { return pos[id] || [byId[id].x, byId[id].y]; }
  function moved(id) { return byId[id] && (pos[id][0] !== byId[id].x || pos[id][1] !== byId[id].y); }

  function drawNode(n, layer) {
    const g = el("g", { class: "cc-node", "data-key": `node:${n.id}`, "data-node": n.id }, layer);
    const [x, y] = centre(n.id);
    g.setAttribute("transform", `translate(${x - n.x},${y - n.y})`);
    el("rect", { x: n.x - n.w / 2, y: n.y - n.h / 2, width: n.w, height: n.h, fill: "transparent" }, g);
    drawOps(n.ops, g, scene.flip);
    if (n.declared) el("circle", { class: "cc-handle", cx: n.x + n.w / 2 + 3, cy: n.y, r: 5.5 }, g);
    n.g = g;
  }

  // A cluster's box now: graphviz's, or around its members once one of them was dragged.
  function clusterBox(c) {
    if (!c.members.some(m => byId[m] && moved(m))) return { box: c.bbox, movedMember: false };
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const m of c.members) {
      const n = byId[m]; if (!n) continue;
      const [x, y] = centre(m);
      x0 = Math.min(x0, x - n.w / 2); y0 = Math.min(y0, y - n.h / 2);
      x1 = Math.max(x1, x + n.w / 2); y1 = Math.max(y1, y + n.h / 2);
    }
    const labelRoom = Math.min(40, Math.max(24, c.bbox[3] - c.bbox[1] - (y1 - y0) - 12));
    return { box: [x0 - 12, y0 - 12 - labelRoom, x1 + 12, y1 + 12], movedMember: true };
  }

  // One end of an edge: its node, or the frame of its group (an edge to or from a group).
  function end(e, side) {
    const groupId = side === "tail" ? e.tailGroup : e.headGroup;
    const c = groupId && scene.clusters.find(k => k.id === groupId);
    if (c) {
      const { box, movedMember } = clusterBox(c);
      return { c: [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], w: box[2] - box[0], h: box[3] - box[1],
               shape: "box", moved: movedMember };
    }
    const id = side === "tail" ? e.tail : e.head, n = byId[id];
    return n && { c: centre(id), w: n.w, h: n.h, shape: n.shape, moved: moved(id) };
  }

  function drawEdge(e, layer, old) {
    const g = el("g", { class: "cc-edge", "data-key": e.id }, null);
    if (old) layer.replaceChild(g, old); else layer.appendChild(g);
    const a = end(e, "tail"), b = end(e, "head");
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
        lg.setAttribute("transform", `translate(${(p[0] + q[0]) / 2 - text.pt[0]},${(p[1] + q[1]) / 2 - (scene.flip - text.pt[1]) - 4})`);
        drawOps(e.label, lg, scene.flip);
      }
    } else {
      const curve = e.ops.find(o => o.op === "b" || o.op === "B");
      if (curve) el("path", { class: "cc-hit", d: bezier(curve.points.map(p => [p[0], scene.flip - p[1]])) }, g);
      drawOps(e.ops, g, scene.flip);
      drawOps(e.label, g, scene.flip);
    }
    e.g = g;
  }

  function drawCluster(c, layer, old) {
    const g = el("g", { class: "cc-cluster", "data-key": `group:${c.id}` }, null);
    if (old) layer.replaceChild(g, old); else layer.appendChild(g);
    const { box, movedMember } = clusterBox(c);
    const [x0, y0, x1, y1] = box;
    if (movedMember) {
      // a member was dragged: the frame follows its members, in graphviz's colours
      const fill = [...c.ops].reverse().find(o => o.op === "C"), pen = c.ops.find(o => o.op === "c");
      el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 6, fill: fill ? fill.color : "#F5F7FA",
                   stroke: pen ? pen.color : "#90A4AE", "stroke-width": 1.2 }, g);
      const lg = el("g", {}, g);
      lg.setAttribute("transform", `translate(${x0 - c.bbox[0]},${y0 - c.bbox[1]})`);
      drawOps(c.label, lg, scene.flip);
    } else {
      drawOps(c.ops, g, scene.flip);
      drawOps(c.label, g, scene.flip);
    }
    el("rect", { class: "cc-cluster-ring", x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 6, fill: "none" }, g);
    c.g = g;
  }
  let layers = {};
  function draw() {
    const text = model.get("scene");
    if (!text) return;
    scene = JSON.parse(text);
    view.textContent = "";
    byId = {}; pos = {};
    for (const n of scene.nodes) { byId[n.id] = n; pos[n.id] = scene.layout[n.id] ? [...scene.layout[n.id]] : [n.x, n.y]; }
    layers = { bg: el("g", { class: "cc-bg" }, view), clusters: el("g", { class: "cc-clusters" }, view),
               edges: el("g", { class: "cc-edges" }, view), nodes: el("g", { class: "cc-nodes" }, view),
               marks: el("g", { class: "cc-marks" }, view) };
    drawOps(scene.background, layers.bg, scene.flip);   // white page and the caption (name, findings, legend)
    for (const c of scene.clusters) drawCluster(c, layers.clusters);
    for (const e of scene.edges) drawEdge(e, layers.edges);
    for (const n of scene.nodes) drawNode(n, layers.nodes);
    stage.style.height = `${stageHeight()}px`;
    if (!userView) requestAnimationFrame(() => fit(true));
    relayoutButton.disabled = !Object.keys(scene.layout).length;
    drawLint();
    marks();
  }

  function marks() {
    layers.marks.textContent = "";
    const sel = model.get("selection"), flash = model.get("highlight");
    view.querySelectorAll(".selected, .flash").forEach(n => n.classList.remove("selected", "flash"));
    for (const [key, cls] of [[sel, "selected"], [flash, "flash"]]) {
      if (!key) continue;
      view.querySelectorAll(`[data-key="${CSS.escape(key)}"]`).forEach(n => n.classList.add(cls));
      if (key.startsWith("node:") && byId[key.slice(5)]) {
        const n = byId[key.slice(5)], [x, y] = centre(n.id);
        el("rect", { class: cls === "selected" ? "cc-ring" : "cc-flash", x: x - n.w / 2 - 5, y: y - n.h / 2 - 5,
                     width: n.w + 10, height: n.h + 10, rx: 8 }, layers.marks);
      }
    }
    const [undo, redo] = model.get("history") || [0, 0];
    undoButton.disabled = !undo; redoButton.disabled = !redo;
    const [text, kind] = (model.get("status") || "").split("\u0000");
    status.textContent = text || ""; status.className = `cc-status ${kind || ""}`;
  }

  function drawLint() {
    lint.textContent = "";
    const found = scene.findings;
    lint.dataset.findings = found.length;
    if (!found.length) { html("div", "cc-ok", lint, "✓ No findings: the linter is happy with this definition."); return; }
    const errors = found.filter(f => f.severity === "error").length, warnings = found.length - errors;
    const parts = [];
    if (errors) parts.push(`${errors} error${errors === 1 ? "" : "s"}`);
    if (warnings) parts.push(`${warnings} warning${warnings === 1 ? "" : "s"}`);
    html("div", "cc-count", lint, `Lint: ${parts.join(", ")}${found.some(f => f.target) ? " (click one to show it)" : ""}`);
    found.forEach((f, i) => {
      const row = html("div", "cc-finding", lint);
      row.dataset.index = i;
      html("span", `cc-sev ${f.severity}`, row, f.severity);
      html("code", "", row, f.key);
      html("span", "cc-where", row, f.where);
      html("span", "cc-msg", row, f.message);
      row.addEventListener("click", () => send({ type: "finding", index: i }));
    });
  }

  // ------------------------------------------------------------------ popups

  function closePopup() {
    const hadFocus = popup.contains(document.activeElement);
    popup.style.display = "none"; popup.textContent = "";
    if (hadFocus) root.focus({ preventScroll: true });   // keys keep reaching the canvas
  }
  function openPopup(clientX, clientY, title) {
    popup.textContent = "";
    html("div", "cc-title", popup, title);
    const r = stage.getBoundingClientRect();
    popup.style.left = `${Math.min(clientX - r.left, r.width - 170)}px`;
    popup.style.top = `${Math.min(clientY - r.top, r.height - 40)}px`;
    popup.style.display = "block";
    return popup;
  }

  function roleChooser(source, target, clientX, clientY) {
    openPopup(clientX, clientY, `${source.split(":")[1]} → ${target.split(":")[1]}: role?`);
    const roles = scene.roles[source] || [];
    const first = roles.length ? Math.min(3, roles.length) : 0;
    roles.forEach((role, i) => {
      const label = role === "reject-loop" ? "reject ↺ loop back (max 3)" : role;
      const b = html("button", i < first ? "cc-first cc-role" : "cc-role", popup, label);
      b.dataset.role = role;
      b.addEventListener("click", () => { closePopup(); send({ type: "connect", source, target, role }); });
    });
    html("button", "cc-cancel", popup, "cancel").addEventListener("click", closePopup);
  }

  function typeChooser(x, y, clientX, clientY) {
    openPopup(clientX, clientY, "Add a node here");
    const id = html("input", "cc-new-id", popup);
    id.placeholder = "node id (optional)";
    id.setAttribute("data-lm-suppress-shortcuts", "true");
    for (const type of ["human", "agent", "webhook"]) {
      const b = html("button", "cc-type", popup, type);
      b.dataset.type = type;
      b.addEventListener("click", () => {
        closePopup();
        send({ type: "add_node", node_type: type, node_id: id.value.trim(), x: Math.round(x), y: Math.round(y) });
      });
    }
    html("button", "cc-cancel", popup, "cancel").addEventListener("click", closePopup);
    id.focus();
  }

  function confirmDelete(key, count) {
    const r = stage.getBoundingClientRect();
    openPopup(r.left + 20, r.top + 20, `Remove ${key.split(":")[1]} and its ${count} edge${count === 1 ? "" : "s"}?`);
    const row = html("div", "cc-row", popup);
    html("button", "cc-danger cc-confirm", row, "Remove").addEventListener("click", () => {
      closePopup(); send({ type: "delete" });
    });
    html("button", "cc-cancel", row, "Cancel").addEventListener("click", closePopup);
  }

  function deleteSelection() {
    const sel = model.get("selection");
    if (!sel) return;
    const item = sel.startsWith("node:") ? byId[sel.slice(5)]
      : sel.startsWith("group:") ? scene.clusters.find(c => c.id === sel.slice(6)) : null;
    if (item && item.edges > 0) confirmDelete(sel, item.edges);   // edges go with it: ask first
    else send({ type: "delete" });
  }

  // ------------------------------------------------------------------ gestures

  const keyOf = target => { const k = target.closest && target.closest("[data-key]"); return k ? k.dataset.key : null; };

  svg.addEventListener("pointerdown", ev => {
    if (ev.button !== 0) return;
    userView = true;
    root.focus({ preventScroll: true });
    closePopup();
    const key = keyOf(ev.target);
    const start = { x: ev.clientX, y: ev.clientY };
    if (ev.target.classList.contains("cc-handle")) {
      const id = ev.target.parentNode.dataset.node, c = centre(id);
      gesture = { kind: "connect", source: `node:${id}`, line: el("line", { class: "cc-temp", x1: c[0] + byId[id].w / 2,
                  y1: c[1], x2: c[0] + byId[id].w / 2, y2: c[1] }, layers.marks) };
    } else if (key && key.startsWith("node:")) {
      const id = key.slice(5);
      gesture = { kind: "node", id, start, origin: [...centre(id)], dragging: false };
    } else if (key && key.startsWith("edge:")) {
      gesture = { kind: "click", key, start };
    } else {
      gesture = { kind: "pan", key, start, origin: { ...tr }, panning: false };
    }
    svg.setPointerCapture(ev.pointerId);
    ev.preventDefault();
  });

  svg.addEventListener("pointermove", ev => {
    if (!gesture) { hover(ev); return; }
    tooltip.style.display = "none";
    const dx = ev.clientX - (gesture.start ? gesture.start.x : 0), dy = ev.clientY - (gesture.start ? gesture.start.y : 0);
    if (gesture.kind === "connect") {
      const [x, y] = toScene(ev.clientX, ev.clientY);
      gesture.line.setAttribute("x2", x); gesture.line.setAttribute("y2", y);
    } else if (gesture.kind === "node" && (gesture.dragging || Math.hypot(dx, dy) > 4)) {
      gesture.dragging = true;
      const n = byId[gesture.id];
      pos[n.id] = [gesture.origin[0] + dx / tr.k, gesture.origin[1] + dy / tr.k];
      n.g.setAttribute("transform", `translate(${pos[n.id][0] - n.x},${pos[n.id][1] - n.y})`);
      if (!n.g.classList.contains("dragging")) { n.g.classList.add("dragging"); layers.nodes.appendChild(n.g); }
      const groups = scene.clusters.filter(c => c.members.includes(n.id));
      for (const c of groups) drawCluster(c, layers.clusters, c.g);
      const ids = new Set(groups.map(c => c.id));
      for (const e of scene.edges)
        if (e.tail === n.id || e.head === n.id || ids.has(e.tailGroup) || ids.has(e.headGroup)) drawEdge(e, layers.edges, e.g);
      marks();
    } else if (gesture.kind === "pan" && (gesture.panning || Math.hypot(dx, dy) > 4)) {
      gesture.panning = true;
      stage.classList.add("panning");
      tr = { ...gesture.origin, x: gesture.origin.x + dx, y: gesture.origin.y + dy };
      apply();
    }
  });

  svg.addEventListener("pointerup", ev => {
    const g = gesture; gesture = null;
    stage.classList.remove("panning");
    if (!g) return;
    if (g.kind === "connect") {
      g.line.remove();
      const under = document.elementFromPoint(ev.clientX, ev.clientY);
      const target = under && stage.contains(under) ? keyOf(under) : null;
      if (target && (target.startsWith("node:") || target.startsWith("group:")) && (byId[target.slice(5)] || target.startsWith("group:")))
        roleChooser(g.source, target, ev.clientX, ev.clientY);
    } else if (g.kind === "node") {
      if (g.dragging) {
        const [x, y] = pos[g.id];
        send({ type: "move", node: g.id, x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10 });
      } else send({ type: "select", target: `node:${g.id}` });
    } else if (g.kind === "click") {
      send({ type: "select", target: g.key });
    } else if (g.kind === "pan" && !g.panning) {
      send({ type: "select", target: g.key && g.key.startsWith("group:") ? g.key : "" });
    }
  });

  svg.addEventListener("dblclick", ev => {
    const key = keyOf(ev.target);
    if (key && !key.startsWith("group:")) return;
    const [x, y] = toScene(ev.clientX, ev.clientY);
    typeChooser(x, y, ev.clientX, ev.clientY);
  });

  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const k = Math.min(4, Math.max(0.15, tr.k * Math.exp(-ev.deltaY * 0.0015)));
    tr = { k, x: mx - (mx - tr.x) * k / tr.k, y: my - (my - tr.y) * k / tr.k };
    userView = true;
    apply();
  }, { passive: false });

  function hover(ev) {
    const key = keyOf(ev.target);
    let lines = null;
    if (key && key.startsWith("node:") && byId[key.slice(5)]) lines = byId[key.slice(5)].hover;
    else if (key && key.startsWith("edge:")) lines = (scene.edges.find(e => e.id === key) || {}).hover;
    else if (key && key.startsWith("group:")) lines = (scene.clusters.find(c => `group:${c.id}` === key) || {}).tooltip;
    if (!lines || !lines.length) { tooltip.style.display = "none"; return; }
    tooltip.textContent = "";
    lines.forEach(t => html("div", "", tooltip, t));
    const r = stage.getBoundingClientRect();
    tooltip.style.left = `${Math.min(ev.clientX - r.left + 14, r.width - 250)}px`;
    tooltip.style.top = `${ev.clientY - r.top + 14}px`;
    tooltip.style.display = "block";
  }
  svg.addEventListener("pointerleave", () => { tooltip.style.display = "none"; });

  root.addEventListener("keydown", ev => {
    if (ev.target.tagName === "INPUT") { if (ev.key === "Escape") closePopup(); ev.stopPropagation(); return; }
    const mod = ev.ctrlKey || ev.metaKey, key = ev.key.toLowerCase();
    let handled = true;
    if (mod && key === "z" && ev.shiftKey) send({ type: "redo" });
    else if (mod && key === "z") send({ type: "undo" });
    else if (ev.ctrlKey && key === "y") send({ type: "redo" });
    else if (ev.key === "Delete" || ev.key === "Backspace") deleteSelection();
    else if (ev.key === "Escape") { closePopup(); send({ type: "select", target: "" }); }
    else handled = false;
    if (handled) { ev.preventDefault(); ev.stopPropagation(); }
  });

  fitButton.addEventListener("click", () => { userView = false; fit(false); });
  relayoutButton.addEventListener("click", () => send({ type: "relayout" }));
  undoButton.addEventListener("click", () => send({ type: "undo" }));
  redoButton.addEventListener("click", () => send({ type: "redo" }));
  model.on("msg:custom", msg => { if (msg && msg.type === "fit") { userView = false; fit(false); } });
  model.on("change:scene", draw);
  for (const name of ["selection", "highlight", "history", "status"]) model.on(`change:${name}`, () => scene && marks());
  draw();
  return () => { root.remove(); };
}

export default { render };

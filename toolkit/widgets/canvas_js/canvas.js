// The Designer's canvas (an anywidget ES module, shipped in the package: no build, no network;
// toolkit/widgets/bundle.py joins this folder's modules into the one module anywidget loads).
//
// It replays the drawing operations graphviz computed (toolkit/widgets/canvas_scene.py) and
// turns gestures into messages for Python, which changes the definition and sends a new
// scene back. Nothing here edits the definition: every gesture is a Designer method.
//   click              -> {type: "select", target}        drag a node       -> {type: "move", node, x, y}
//   drag from handle   -> {type: "connect", source, target, role}
//   double-click bg    -> {type: "add_node", node_type, node_id, x, y}
//   Delete/Backspace   -> {type: "delete"}                  Ctrl/Cmd+Z (+Shift), Ctrl+Y -> undo / redo
//   click a finding    -> {type: "finding", index}         re-layout -> {type: "relayout"}
//
// The modules share one object, ctx: the model, the page's elements, the scene being shown and
// the state of the view (node positions while dragging, zoom and pan, the gesture under way).

import { el, html } from "./dom.js";
import { listenToPointer } from "./gestures.js";
import { listenToKeys } from "./keyboard.js";
import { draw, marks } from "./picture.js";
import { fit } from "./viewport.js";

function toolbar(ctx, bar) {
  const button = (label, title, cls) => { const b = html("button", cls, bar, label); b.title = title; return b; };
  const fitButton = button("Fit", "show the whole graph", "cc-fit");
  ctx.buttons = {
    relayout: button("Re-layout", "forget dragged positions: graphviz places every node", "cc-relayout"),
    undo: button("↶ Undo", "undo the last change (Ctrl/Cmd+Z)", "cc-undo"),
    redo: button("↷ Redo", "redo (Ctrl/Cmd+Shift+Z or Ctrl+Y)", "cc-redo"),
  };
  html("span", "cc-hint", bar,
       "click selects · drag a node to move it, from its ● to connect · double-click the background to add · " +
       "Del removes · wheel zooms · drag the background to pan");
  ctx.status = html("span", "cc-status", bar);
  fitButton.addEventListener("click", () => { ctx.userView = false; fit(ctx, false); });
  for (const type of ["relayout", "undo", "redo"]) ctx.buttons[type].addEventListener("click", () => ctx.send({ type }));
}

function render({ model, el: host }) {
  const root = html("div", "collab-canvas", host);
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");   // JupyterLab leaves our keys alone
  // userView: the person has used the canvas, so redraws keep the view where it is (a node added by a
  // double-click appears under the pointer); until then (changes made from code) every redraw fits
  const ctx = { model, root, send: msg => model.send(msg), scene: null, byId: {}, pos: {}, layers: {},
                tr: { x: 0, y: 0, k: 1 }, userView: false, gesture: null };
  toolbar(ctx, html("div", "cc-toolbar", root));
  ctx.stage = html("div", "cc-stage", root);
  ctx.svg = el("svg", { class: "cc-svg" }, ctx.stage);
  ctx.view = el("g", { class: "cc-view" }, ctx.svg);
  ctx.tooltip = html("div", "cc-tooltip", ctx.stage);
  ctx.popup = html("div", "cc-popup", ctx.stage);
  ctx.lint = html("div", "cc-lint collab-designer-lint", root);

  listenToPointer(ctx);
  listenToKeys(ctx);
  model.on("msg:custom", msg => { if (msg && msg.type === "fit") { ctx.userView = false; fit(ctx, false); } });
  model.on("change:scene", () => draw(ctx));
  for (const name of ["selection", "highlight", "history", "status"]) model.on(`change:${name}`, () => ctx.scene && marks(ctx));
  draw(ctx);
  return () => { root.remove(); };
}

export default { render };

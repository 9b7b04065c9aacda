// Small in-canvas questions: the role of a new edge, the type of a new node, and "remove it
// with its edges?" (a browser confirm() would block the page and headless browsers dismiss it).

import { html } from "./dom.js";

export function closePopup(ctx) {
  const popup = ctx.popup, hadFocus = popup.contains(document.activeElement);
  popup.style.display = "none"; popup.textContent = "";
  if (hadFocus) ctx.root.focus({ preventScroll: true });   // keys keep reaching the canvas
}

function openPopup(ctx, clientX, clientY, title) {
  const popup = ctx.popup;
  popup.textContent = "";
  html("div", "cc-title", popup, title);
  const r = ctx.stage.getBoundingClientRect();
  popup.style.left = `${Math.min(clientX - r.left, r.width - 170)}px`;
  popup.style.top = `${Math.min(clientY - r.top, r.height - 40)}px`;
  popup.style.display = "block";
  return popup;
}

function cancelButton(ctx, parent, text = "cancel") {
  html("button", "cc-cancel", parent, text).addEventListener("click", () => closePopup(ctx));
}

// The roles for an edge from `source`, the ones that fit first (bold).
export function roleChooser(ctx, source, target, clientX, clientY) {
  const popup = openPopup(ctx, clientX, clientY, `${source.split(":")[1]} → ${target.split(":")[1]}: role?`);
  const roles = ctx.scene.roles[source] || [];
  const first = roles.length ? Math.min(3, roles.length) : 0;
  roles.forEach((role, i) => {
    const label = role === "reject-loop" ? "reject ↺ loop back (max 3)" : role;
    const b = html("button", i < first ? "cc-first cc-role" : "cc-role", popup, label);
    b.dataset.role = role;
    b.addEventListener("click", () => { closePopup(ctx); ctx.send({ type: "connect", source, target, role }); });
  });
  cancelButton(ctx, popup);
}

// A node's type (and an optional id) for a node added at (x, y) of the picture.
export function typeChooser(ctx, x, y, clientX, clientY) {
  const popup = openPopup(ctx, clientX, clientY, "Add a node here");
  const id = html("input", "cc-new-id", popup);
  id.placeholder = "node id (optional)";
  id.setAttribute("data-lm-suppress-shortcuts", "true");
  for (const type of ["human", "agent", "webhook"]) {
    const b = html("button", "cc-type", popup, type);
    b.dataset.type = type;
    b.addEventListener("click", () => {
      closePopup(ctx);
      ctx.send({ type: "add_node", node_type: type, node_id: id.value.trim(), x: Math.round(x), y: Math.round(y) });
    });
  }
  cancelButton(ctx, popup);
  id.focus();
}

function confirmDelete(ctx, key, count) {
  const r = ctx.stage.getBoundingClientRect();
  const popup = openPopup(ctx, r.left + 20, r.top + 20,
                          `Remove ${key.split(":")[1]} and its ${count} edge${count === 1 ? "" : "s"}?`);
  const row = html("div", "cc-row", popup);
  html("button", "cc-danger cc-confirm", row, "Remove").addEventListener("click", () => {
    closePopup(ctx); ctx.send({ type: "delete" });
  });
  cancelButton(ctx, row, "Cancel");
}

// Delete/Backspace: remove the selection, asking first when edges go with it.
export function deleteSelection(ctx) {
  const sel = ctx.model.get("selection");
  if (!sel) return;
  const item = sel.startsWith("node:") ? ctx.byId[sel.slice(5)]
    : sel.startsWith("group:") ? ctx.scene.clusters.find(c => c.id === sel.slice(6)) : null;
  if (item && item.edges > 0) confirmDelete(ctx, sel, item.edges);
  else ctx.send({ type: "delete" });
}

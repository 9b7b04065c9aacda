// Replaying graphviz's own drawing: the xdot operations of `dot -Tjson` (c/C colours, S style,
// F font, t bold, E/e P/p L B/b T), as SVG. graphviz measures y upward: each y becomes flip - y.

import { el } from "./dom.js";

export function drawOps(ops, parent, flip) {
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

export function bezier(points) {
  let d = `M${points[0][0]},${points[0][1]}`;
  for (let i = 1; i + 2 < points.length; i += 3)
    d += ` C${points[i][0]},${points[i][1]} ${points[i + 1][0]},${points[i + 1][1]} ${points[i + 2][0]},${points[i + 2][1]}`;
  return d;
}

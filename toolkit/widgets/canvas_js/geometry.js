// Where things are now: graphviz's positions, or where a person dragged a node (ctx.pos), and
// the frames and edge ends that follow a dragged node.

// A node's current centre.
export function centre(ctx, id) { return ctx.pos[id] || [ctx.byId[id].x, ctx.byId[id].y]; }

// Whether a node was dragged away from where graphviz put it.
export function moved(ctx, id) {
  const n = ctx.byId[id];
  return n && (ctx.pos[id][0] !== n.x || ctx.pos[id][1] !== n.y);
}

// The picture's extent [x, y, width, height]: graphviz's page plus any node dragged outside it.
export function extent(ctx) {
  let [x0, y0, x1, y1] = [0, 0, ctx.scene.width, ctx.scene.height];
  for (const n of ctx.scene.nodes) {
    const [x, y] = centre(ctx, n.id);
    x0 = Math.min(x0, x - n.w / 2 - 10); y0 = Math.min(y0, y - n.h / 2 - 10);
    x1 = Math.max(x1, x + n.w / 2 + 10); y1 = Math.max(y1, y + n.h / 2 + 10);
  }
  return [x0, y0, x1 - x0, y1 - y0];
}

// Where the line from a node's centre c towards (tx, ty) leaves its box or ellipse.
export function border(n, c, tx, ty) {
  const dx = tx - c[0], dy = ty - c[1];
  if (!dx && !dy) return c;
  const hw = n.w / 2, hh = n.h / 2;
  let t;
  if (n.shape === "ellipse") t = 1 / Math.sqrt((dx * dx) / (hw * hw) + (dy * dy) / (hh * hh));
  else t = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return [c[0] + dx * t, c[1] + dy * t];
}

// A cluster's box now: graphviz's, or around its members once one of them was dragged.
export function clusterBox(ctx, c) {
  if (!c.members.some(m => ctx.byId[m] && moved(ctx, m))) return { box: c.bbox, movedMember: false };
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const m of c.members) {
    const n = ctx.byId[m]; if (!n) continue;
    const [x, y] = centre(ctx, m);
    x0 = Math.min(x0, x - n.w / 2); y0 = Math.min(y0, y - n.h / 2);
    x1 = Math.max(x1, x + n.w / 2); y1 = Math.max(y1, y + n.h / 2);
  }
  const labelRoom = Math.min(40, Math.max(24, c.bbox[3] - c.bbox[1] - (y1 - y0) - 12));
  return { box: [x0 - 12, y0 - 12 - labelRoom, x1 + 12, y1 + 12], movedMember: true };
}

// One end of an edge: its node, or the frame of its group (an edge to or from a group).
export function edgeEnd(ctx, e, side) {
  const groupId = side === "tail" ? e.tailGroup : e.headGroup;
  const c = groupId && ctx.scene.clusters.find(k => k.id === groupId);
  if (c) {
    const { box, movedMember } = clusterBox(ctx, c);
    return { c: [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], w: box[2] - box[0], h: box[3] - box[1],
             shape: "box", moved: movedMember };
  }
  const id = side === "tail" ? e.tail : e.head, n = ctx.byId[id];
  return n && { c: centre(ctx, id), w: n.w, h: n.h, shape: n.shape, moved: moved(ctx, id) };
}

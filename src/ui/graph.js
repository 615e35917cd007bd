// graph.js -- lanes for the history graph, computed as pages of checkpoints
// arrive (newest first, children before parents, as space.graph orders
// them).  A list of lanes each waits for one checkpoint; a checkpoint takes
// the lane waiting for it (other lanes waiting for it end there: a fork
// point), then that lane waits for its parent.  A merge's second parent and
// a restore's source open lanes of their own (the restore's is dashed).
// Each row keeps the lanes before and after it, so a row draws itself
// alone: only the rows in view are ever drawn.  Cost O(rows x live lanes).
import { svg } from './dom.js';

export const ROW_H = 40;
const COL_W = 14;
const PALETTE = 8;

export class LaneLayout {
  constructor() {
    this.lanes = [];
    this.rows = [];
    this.cols = 1;
  }

  add(nodes) {
    for (const n of nodes) this.rows.push(this.place(n));
  }

  free() {
    const i = this.lanes.findIndex((w) => !w);
    return i < 0 ? this.lanes.length : i;
  }

  place(n) {
    const lanes = this.lanes;
    const before = lanes.slice();
    let col = -1;
    lanes.forEach((w, i) => {
      if (w && w.hash === n.hash) {
        if (col < 0 || (lanes[col].dashed && !w.dashed)) col = i;
      }
    });
    lanes.forEach((w, i) => { if (w && w.hash === n.hash) lanes[i] = null; });
    if (col < 0) col = this.free();
    lanes[col] = n.parent ? { hash: n.parent, dashed: false } : null;
    const outs = [];
    for (const [p, dashed] of [[n.merge_parent, false], [n.restored_from, true]]) {
      if (!p || p === n.parent) continue;
      let k = lanes.findIndex((w) => w && w.hash === p);
      if (k < 0) {
        k = this.free();
        lanes[k] = { hash: p, dashed };
      }
      outs.push({ col: k, dashed });
    }
    while (lanes.length && !lanes[lanes.length - 1]) lanes.pop();
    const row = { node: n, col, before, after: lanes.slice(), outs };
    this.cols = Math.max(this.cols, before.length, lanes.length, col + 1);
    return row;
  }
}

const x = (c) => COL_W / 2 + 4 + c * COL_W;

function edge(x1, y1, x2, y2, color, dashed) {
  const d = x1 === x2 ? `M${x1} ${y1}V${y2}`
    : `M${x1} ${y1}C${x1} ${(y1 + y2) / 2} ${x2} ${(y1 + y2) / 2} ${x2} ${y2}`;
  const a = { d, class: `edge c${color % PALETTE}` };
  if (dashed) a.class += ' dashed';
  return svg('path', a);
}

// The graph cell of one row, cols lanes wide.
export function drawRow(row, cols, isHead) {
  const H = ROW_H;
  const s = svg('svg', { width: x(cols - 1) + COL_W / 2 + 2, height: H, 'aria-hidden': 'true', class: 'lanes' });
  const { node, col } = row;
  row.before.forEach((w, c) => {
    if (!w) return;
    if (w.hash === node.hash) s.append(edge(x(c), 0, x(col), H / 2, c, w.dashed));
    else s.append(edge(x(c), 0, x(c), H, c, w.dashed));
  });
  if (node.parent && row.after[col]) s.append(edge(x(col), H / 2, x(col), H, col, false));
  for (const o of row.outs) s.append(edge(x(col), H / 2, x(o.col), H, o.dashed ? col : o.col, o.dashed));
  s.append(svg('circle', { cx: x(col), cy: H / 2, r: isHead ? 5.5 : 4, class: `dot c${col % PALETTE}${isHead ? ' head' : ''}${node.own ? '' : ' other'}` }));
  return s;
}

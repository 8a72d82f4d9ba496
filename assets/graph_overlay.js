// memrag's layer over a vis-network graph page (memrag/viz/graph_html.py puts it after pyvis's script).
// 1. Node labels as text elements at a fixed type size (vis-network's canvas labels shrink with the
//    zoom to a few pixels), placed so that no two overlap and none leaves the frame: nodes are
//    first pushed apart until their label boxes fit (unless the page's positions are fixed: then
//    Python made that room), then each label takes the first free place around its node; a label
//    with no free place is hidden (its name stays on hover and in the panel).
// 2. A details panel opened by clicking a node or its label.
// Every piece of document or model text is set with textContent: nothing here makes markup.
(function () {
  "use strict";
  const source = document.getElementById("memrag-graph-extra");
  if (!source || typeof network === "undefined") return;
  const extra = JSON.parse(source.textContent);
  const box = document.getElementById("mynetwork");
  const layer = document.createElement("div");
  layer.id = "memrag-labels";
  box.appendChild(layer);
  const labels = {};  // node id -> its label element
  const offsets = {};  // node id -> [dx, dy] of the label's top-left from the node, in screen px
  const home = {};  // node id -> canvas position as first drawn (every arrangement starts from it)
  const PAD = 3;

  function makeLabel(id) {
    const text = extra.texts[id];
    if (!text) return;
    const el = document.createElement("div");
    el.className = "memrag-label" + (extra.dim.indexOf(id) >= 0 ? " dim" : "")
      + (extra.ghost.indexOf(id) >= 0 ? " ghost" : "");
    el.textContent = text;
    el.dataset.node = id;
    el.style.fontSize = extra.px + "px";
    el.addEventListener("click", function () { openPanel(id); });
    layer.appendChild(el);
    labels[id] = el;
  }

  function screenOf(ids) {
    const pos = network.getPositions(ids);
    const out = {};
    ids.forEach(function (id) { if (pos[id]) out[id] = network.canvasToDOM(pos[id]); });
    return out;
  }

  function radius(id) {
    const n = nodes.get(id);
    return Math.max(4, (n && n.size ? n.size : 12) * network.getScale());
  }

  function overlaps(a, b) {
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  }

  // Push nodes apart (in screen space) until each node with the label box under it clears the others.
  function relax(ids, at, W, H) {
    const size = {};
    ids.forEach(function (id) {
      const el = labels[id], r = radius(id);
      const w = el ? el.offsetWidth : 0, h = el ? el.offsetHeight : 0;
      size[id] = {w: Math.max(w, 2 * r) + PAD, up: r + PAD, down: r + 2 + h + PAD};
    });
    for (let round = 0; round < 400; round++) {
      let moved = false;
      for (let i = 0; i < ids.length; i++) {
        for (let j = i + 1; j < ids.length; j++) {
          const a = at[ids[i]], b = at[ids[j]], sa = size[ids[i]], sb = size[ids[j]];
          const ox = (sa.w + sb.w) / 2 - Math.abs(a.x - b.x);
          const oy = a.y <= b.y ? sa.down + sb.up - (b.y - a.y) : sb.down + sa.up - (a.y - b.y);
          if (ox <= 0 || oy <= 0) continue;
          moved = true;
          if (ox < oy) {
            const s = (a.x < b.x || (a.x === b.x && i < j) ? -1 : 1) * (ox / 2 + 0.5);
            a.x += s; b.x -= s;
          } else {
            const s = (a.y < b.y || (a.y === b.y && i < j) ? -1 : 1) * (oy / 2 + 0.5);
            a.y += s; b.y -= s;
          }
        }
      }
      ids.forEach(function (id) {
        const p = at[id], s = size[id];
        p.x = Math.min(Math.max(p.x, s.w / 2 + PAD), W - s.w / 2 - PAD);
        p.y = Math.min(Math.max(p.y, s.up + PAD), H - s.down - PAD);
      });
      if (!moved) break;
    }
  }

  // Each label at the first place around its node that stays in the frame and clears the labels
  // already placed and every node (a focus graph, where every label must be written, lets a label
  // cover a node when nothing else is free); in priority order, so what matters is placed first.
  function place() {
    const W = box.clientWidth, H = box.clientHeight;
    // a ghost (a later step of a replay) keeps its label's room in `relax` but takes no place here
    const ids = extra.order.filter(function (id) {
      return labels[id] && nodes.get(id) && extra.ghost.indexOf(id) < 0;
    });
    const at = screenOf(ids);
    const discs = Object.entries(screenOf(nodes.getIds())).map(function (e) {
      const r = radius(e[0]);
      return {id: e[0], x: e[1].x - r, y: e[1].y - r, w: 2 * r, h: 2 * r};
    });
    const taken = [];
    let hidden = 0;
    ids.forEach(function (id) {
      const el = labels[id], p = at[id], r = radius(id);
      const w = el.offsetWidth, h = el.offsetHeight;
      // around the node first, then a line or two further out (a crowded hub's neighbours)
      const spots = [[-w / 2, r + 2], [-w / 2, -r - 2 - h], [r + 4, -h / 2], [-r - 4 - w, -h / 2],
                     [r, r], [-r - w, r], [r, -r - h], [-r - w, -r - h]];
      // a graph whose labels must all be written looks further out (and beside) before giving up on one
      const reach = extra.labelAll ? 6 : 3;
      for (let k = 1; k <= reach; k++) {
        spots.push([-w / 2, r + 2 + k * h], [-w / 2, -r - 2 - (k + 1) * h], [r + 4, -h / 2 + k * h],
                   [r + 4, -h / 2 - k * h], [-r - 4 - w, -h / 2 + k * h], [-r - 4 - w, -h / 2 - k * h]);
        if (extra.labelAll) spots.push([-w, r + 2 + (k - 1) * h], [0, r + 2 + (k - 1) * h],
                                       [-w, -r - 2 - k * h], [0, -r - 2 - k * h]);
      }
      let best = null, fallback = null;
      for (const s of spots) {
        const b = {x: p.x + s[0], y: p.y + s[1], w: w, h: h};
        if (b.x < 1 || b.y < 1 || b.x + w > W - 1 || b.y + h > H - 1) continue;
        if (taken.some(function (t) { return overlaps(b, t); })) continue;
        if (!discs.some(function (d) { return d.id !== id && overlaps(b, d); })) { best = b; break; }
        if (!fallback && extra.labelAll) fallback = b;  // a label over another node only where all must be written
      }
      best = best || fallback;
      if (!best) { el.style.display = "none"; offsets[id] = null; hidden++; return; }
      taken.push(best);
      offsets[id] = [best.x - p.x, best.y - p.y];
      el.style.display = "";
    });
    layer.dataset.hidden = String(hidden);
    follow();
  }

  function follow() {
    const ids = Object.keys(labels);
    const at = screenOf(ids);
    ids.forEach(function (id) {
      const off = offsets[id], p = at[id], el = labels[id];
      if (!off || !p) return;
      el.style.left = Math.round(p.x + off[0]) + "px";
      el.style.top = Math.round(p.y + off[1]) + "px";
    });
  }

  // A picture of a sequence (a Learn replay's step) shares its positions and their box with the
  // others: the view fits that box, not the nodes drawn now, and no node is moved, so every node stays
  // where the previous step drew it.
  function fitBox(b) {
    const W = box.clientWidth, H = box.clientHeight;
    network.moveTo({position: {x: b.w / 2, y: b.h / 2}, scale: Math.min(W / b.w, H / b.h), animation: false});
  }

  // Every node to its place, then one redraw. network.moveNode schedules a full redraw per node (on
  // the Memory page's 265-node graph: 265 redraws, most of its 2.6 s), and a data update rounds
  // positions to whole canvas units; this sets them as moveNode does, once.
  function moveAll(to) {
    let moved = false;
    Object.keys(to).forEach(function (id) {
      const n = network.body.nodes[id];
      if (n && (n.x !== to[id].x || n.y !== to[id].y)) { n.x = Number(to[id].x); n.y = Number(to[id].y); moved = true; }
    });
    if (moved) network.redraw();
  }

  function arrange() {
    const ids = Object.keys(home);
    moveAll(home);
    if (extra.fixed) { fitBox(extra.fixed); place(); return; }
    network.fit({animation: false});
    const W = box.clientWidth, H = box.clientHeight;
    const at = screenOf(ids);
    const named = ids.filter(function (id) { return labels[id]; });
    let area = 0;
    named.forEach(function (id) { area += (labels[id].offsetWidth + 8) * (labels[id].offsetHeight + 20); });
    // spreading nodes apart where the labels fit easily, or must all be written (a focus graph)
    if (ids.length <= 150 && (extra.labelAll || area < 0.2 * W * H)) {
      relax(ids, at, W, H);
      const to = {};
      ids.forEach(function (id) { to[id] = network.DOMtoCanvas(at[id]); });
      moveAll(to);
    }
    place();
  }

  // ------------------------------------------------------------------ the details panel
  const panel = document.createElement("div");
  panel.id = "memrag-panel";
  panel.style.fontSize = extra.px + "px";
  panel.hidden = true;
  box.appendChild(panel);

  function add(parent, tag, text, cls) {
    const el = document.createElement(tag);
    if (text !== undefined) el.textContent = text;
    if (cls) el.className = cls;
    parent.appendChild(el);
    return el;
  }

  function section(title, lines) {
    if (!lines || !lines.length) return;
    add(panel, "div", title, "memrag-head");
    const list = add(panel, "ul");
    lines.forEach(function (line) { add(list, "li", line); });
  }

  // The relations drawn at a node, each as its edge's hover text says it (or "a → label → b").
  function relations(id) {
    const name = function (n) { const x = nodes.get(n); return x ? x.label.trim() : n; };
    const found = edges.get({filter: function (e) {
      return (e.from === id || e.to === id) && extra.coref.indexOf(e.id) < 0;
    }});
    const lines = found.map(function (e) {
      const first = String(e.title || "").split("\n")[0];
      return first && first !== e.label ? first : name(e.from) + " → " + (e.label || "") + " → " + name(e.to);
    });
    return lines.length > 12 ? lines.slice(0, 12).concat(["… and " + (lines.length - 12) + " more"]) : lines;
  }

  function openPanel(id) {
    const d = extra.details[id];
    if (!d) return;
    panel.replaceChildren();
    const close = add(panel, "button", "×", "memrag-close");
    close.title = "close";
    close.addEventListener("click", function () { panel.hidden = true; network.unselectAll(); });
    add(panel, "div", d.name, "memrag-name");
    add(panel, "div", d.kind + (d.group ? " · " + d.heading + ": " + d.group : ""), "memrag-kind");
    section("about", d.about);
    section("relations", relations(id));
    section("coreference candidates", d.coref);
    if (d.passages && d.passages.length) {
      add(panel, "div", "source passages", "memrag-head");
      d.passages.forEach(function (cid) {
        const p = extra.passages[cid];
        if (!p) return;
        const item = add(panel, "div", undefined, "memrag-passage");
        add(item, "div", p[0], "memrag-title");
        add(item, "div", p[1], "memrag-text");
      });
    }
    panel.dataset.node = id;
    panel.hidden = false;
  }

  network.on("click", function (params) {
    if (params.nodes && params.nodes.length) openPanel(params.nodes[0]);
  });
  network.on("afterDrawing", follow);
  network.on("zoom", function () { window.clearTimeout(layer.timer); layer.timer = window.setTimeout(place, 120); });
  network.on("dragEnd", place);
  let resized = null;
  window.addEventListener("resize", function () { window.clearTimeout(resized); resized = window.setTimeout(arrange, 150); });

  Object.entries(network.getPositions()).forEach(function (e) { home[e[0]] = e[1]; });
  extra.order.forEach(makeLabel);
  arrange();
  document.body.dataset.memragReady = "1";
})();

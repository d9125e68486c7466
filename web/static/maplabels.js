// Label culling for vis-network maps, as VOSviewer does it: after every redraw, the labels of the
// most important nodes are placed greedily in screen space (below, above, right, left of the node, then its corners)
// and a label is only drawn where its box overlaps no label already placed and no more important
// node; of those places, one that covers no node at all is taken first (a label on a disc hides it
// and is hard to read); zooming in spreads the nodes, so more labels fit.
// vis-network has no such mode (it draws every label or none), hence this small module.
(function () {
  "use strict";
  const FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif";
  const MAX_LABELS = 400;

  function overlaps(a, b) {
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  }

  function insert(grid, cell, box) {
    for (let gx = Math.floor(box.x / cell); gx <= Math.floor((box.x + box.w) / cell); gx++) {
      for (let gy = Math.floor(box.y / cell); gy <= Math.floor((box.y + box.h) / cell); gy++) {
        const key = gx + "," + gy;
        if (!grid.has(key)) grid.set(key, []);
        grid.get(key).push(box);
      }
    }
  }

  // A disc is the circle in its box: a label may sit in the box's corner beside it.
  function coversDisc(box, disc) {
    const r = disc.w / 2;
    const dx = Math.min(Math.max(disc.x + r, box.x), box.x + box.w) - (disc.x + r);
    const dy = Math.min(Math.max(disc.y + r, box.y), box.y + box.h) - (disc.y + r);
    return dx * dx + dy * dy < r * r;
  }

  function free(grid, cell, box) {
    for (let gx = Math.floor(box.x / cell); gx <= Math.floor((box.x + box.w) / cell); gx++) {
      for (let gy = Math.floor(box.y / cell); gy <= Math.floor((box.y + box.h) / cell); gy++) {
        for (const other of grid.get(gx + "," + gy) || []) {
          if (other.disc && other.id === box.id) continue;
          if (other.disc ? coversDisc(box, other) : overlaps(box, other)) return false;
        }
      }
    }
    return true;
  }

  // Places labels for `candidates` (most important first: {id, name, size}); returns the boxes drawn,
  // in CSS pixels relative to the map's top-left corner.
  // `clearOfDiscs(node)` (every topic of the topic map): that node's label never covers another node's disc; it goes
  // unlabelled rather (its tooltip and the find box name it). Others may cover less important discs if need be.
  function place(network, container, ctx, candidates, positions, clearOfDiscs) {
    const scale = network.getScale();
    const width = container.clientWidth;
    const height = container.clientHeight;
    const ratio = ctx.canvas.width / Math.max(1, width);
    const kept = [];
    // A coarse grid of the boxes already kept makes each test look at a few neighbours only.
    const cell = 80;
    const grid = new Map();
    // Every node's disc on screen, whatever its importance: a place clear of all of them is preferred.
    const discs = new Map();
    for (const node of candidates) {
      const at = positions[node.id];
      if (!at) continue;
      const dom = network.canvasToDOM(at);
      const radius = node.size * scale;
      if (dom.x + radius < 0 || dom.x - radius > width || dom.y + radius < 0 || dom.y - radius > height) continue;
      insert(discs, cell, { id: node.id, x: dom.x - radius, y: dom.y - radius, w: 2 * radius, h: 2 * radius, disc: true });
    }
    ctx.save();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.lineJoin = "round";
    for (const node of candidates) {
      if (kept.length >= MAX_LABELS) break;
      const at = positions[node.id];
      if (!at || !node.name) continue;
      const dom = network.canvasToDOM(at);
      const radius = node.size * scale;
      const font = Math.round(Math.min(20, 11 + radius * 0.22));
      ctx.font = (node.important ? "600 " : "") + font + "px " + FONT;
      const w = ctx.measureText(node.name).width + 4;
      const h = font + 3;
      // As cartographers do: below the node, else above, right, left; the first free place wins. Below and
      // above, a label near the frame's side slides along it to stay whole (a big node there kept no name).
      const along = Math.max(0, Math.min(width - w, dom.x - w / 2));
      const places = [
        { x: along, y: dom.y + radius + 1 },
        { x: along, y: dom.y - radius - 1 - h },
        { x: dom.x + radius + 2, y: dom.y - h / 2 },
        { x: dom.x - radius - 2 - w, y: dom.y - h / 2 },
        // then the four corners, as Imhof's positions go on: a node hemmed in on four sides by bigger ones
        // (a topic map's middle area) often has one of them free
        { x: dom.x + radius * 0.71, y: dom.y + radius * 0.71 },
        { x: dom.x + radius * 0.71, y: dom.y - radius * 0.71 - h },
        { x: dom.x - radius * 0.71 - w, y: dom.y + radius * 0.71 },
        { x: dom.x - radius * 0.71 - w, y: dom.y - radius * 0.71 - h },
        // last, on its own disc (a topic map's area ringed by its subareas has no clear place beside it)
        { x: along, y: dom.y - h / 2 },
      ];
      let box = null;
      for (const at2 of places) {
        const candidate = { id: node.id, x: at2.x, y: at2.y, w: w, h: h };
        if (candidate.x < 0 || candidate.x + w > width || candidate.y < 0 || candidate.y + h > height) continue;
        if (!free(grid, cell, candidate)) continue;
        if (free(discs, cell, candidate)) { box = candidate; break; }
        if (box === null && !(clearOfDiscs && clearOfDiscs(node))) box = candidate; // a clear place may come after it
      }
      // The disc of a more important node is an obstacle to the labels after it, labelled or not:
      // the hubs stay visible, and a label may only cover nodes less important than its own.
      insert(grid, cell, { id: node.id, x: dom.x - radius, y: dom.y - radius, w: 2 * radius, h: 2 * radius, disc: true });
      if (box === null) continue; // whole labels only, never on another label
      insert(grid, cell, box);
      box.font = ctx.font;
      box.text = node.name;
      kept.push(box);
    }
    for (const box of kept) {
      ctx.font = box.font;
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255,255,255,0.92)";
      ctx.strokeText(box.text, box.x + box.w / 2, box.y + 1);
      ctx.fillStyle = "#1b1b1b";
      ctx.fillText(box.text, box.x + box.w / 2, box.y + 1);
    }
    ctx.restore();
    return kept.map(function (b) { return { id: b.id, text: b.text, x: b.x, y: b.y, w: b.w, h: b.h }; });
  }

  window.bibgraphLabels = { place: place, overlaps: overlaps };
})();

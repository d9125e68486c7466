// Draws a network view from the JSON that the server embedded (nodes already laid out, physics off).
// Titles and names are plain strings, shown as text (tooltips, labels drawn on the canvas, textContent
// in the side panel), so names can never inject HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const container = document.getElementById("network");
  const embedded = container.dataset.embedded === "true";
  // The topic map links topics by shared authors (and an area to its subareas), not people by joint papers.
  const topics = container.dataset.kind === "topics";
  // On the topic map no label covers another topic's disc (an area's name sat on its subareas' rings): a topic
  // with no clear place goes unlabelled, named by its tooltip and the find box.
  function everyNode() { return true; }
  // The app's path behind a reverse proxy's prefix ("/bib/"); node URLs are app paths ("/author/…").
  const root = (document.querySelector('meta[name="bibgraph-root"]') || { content: "/" }).content;
  function site(path) { return root + path.replace(/^\//, ""); }
  // Labels are drawn by maplabels.js (culled so that none overlaps), not by vis-network.
  for (const node of data.nodes) {
    node.name = node.label;
    delete node.label;
    if (node.ego) {
      node.borderWidth = 5;
      node.color = { background: node.color, border: "#111" };
    }
  }
  const nodes = new vis.DataSet(data.nodes);
  const edges = new vis.DataSet(data.edges);
  const options = Object.assign({}, data.options);
  options.interaction = Object.assign({}, options.interaction, { dragNodes: false });
  const network = new vis.Network(container, { nodes: nodes, edges: edges }, options);
  const positions = network.getPositions();
  const byImportance = data.nodes.slice().sort(function (a, b) {
    return (b.ego ? 1 : 0) - (a.ego ? 1 : 0) || (b.papers || 0) - (a.papers || 0) || b.size - a.size ||
      (a.name < b.name ? -1 : 1);
  });
  const neighbours = new Map();
  for (const edge of data.edges) {
    if (!neighbours.has(edge.from)) neighbours.set(edge.from, []);
    if (!neighbours.has(edge.to)) neighbours.set(edge.to, []);
    const joint = edge.joint === undefined ? (topics ? Infinity : 1) : edge.joint; // area-subarea links first
    neighbours.get(edge.from).push([edge.to, joint, edge.id]);
    neighbours.get(edge.to).push([edge.from, joint, edge.id]);
  }
  // On the topic map a subarea is a ring (its colour an object); an area a filled disc. Areas are always named.
  let focusId = null; // hovered or selected node: it and its neighbours are highlighted
  let community = null; // picked in the legend: its members stand out, the rest fade
  let drawn = [];

  function candidates() {
    if (focusId === null && community !== null) {  // a legend pick: only its members are named
      return byImportance.filter(function (n) { return n.community === community; });
    }
    if (focusId === null) return byImportance;
    const near = new Set([focusId].concat((neighbours.get(focusId) || []).map(function (n) { return n[0]; })));
    const first = byImportance.filter(function (n) { return n.id === focusId; });
    return first.concat(byImportance.filter(function (n) { return n.id !== focusId && near.has(n.id); }))
      .map(function (n) { return Object.assign({}, n, { important: n.id === focusId }); });
  }

  network.on("afterDrawing", function (ctx) {
    drawn = window.bibgraphLabels.place(network, container, ctx, candidates(), positions, topics ? everyNode : null);
  });

  function highlight(id) {
    if (id === focusId) return;
    focusId = id;
    const near = new Set(id === null ? [] : [id].concat((neighbours.get(id) || []).map(function (n) { return n[0]; })));
    const nodeUpdates = [];
    nodes.forEach(function (node) {
      const resting = community === null || node.community === community ? 1 : 0.12; // a legend pick holds
      const opacity = id === null ? resting : (near.has(node.id) ? 1 : 0.15);
      if ((node.opacity === undefined ? 1 : node.opacity) !== opacity) nodeUpdates.push({ id: node.id, opacity: opacity });
    });
    nodes.update(nodeUpdates);
    const touching = new Set(id === null ? [] : (neighbours.get(id) || []).map(function (n) { return n[2]; }));
    const edgeUpdates = [];
    const picked = function (edge) {
      const a = nodes.get(edge.from), b = nodes.get(edge.to);
      return community === null || (a.community === community && b.community === community);
    };
    edges.forEach(function (edge) {
      const hidden = id !== null ? !touching.has(edge.id) : !picked(edge);
      if (Boolean(edge.hidden) !== hidden) edgeUpdates.push({ id: edge.id, hidden: hidden });
    });
    edges.update(edgeUpdates);
  }

  let selected = null;
  network.on("hoverNode", function (params) { highlight(params.node); });
  network.on("blurNode", function () { highlight(selected); });

  function pickCommunity(index) {
    community = index === community ? null : index;
    const nodeUpdates = [];
    const members = new Set();
    nodes.forEach(function (node) {
      const inside = community === null || node.community === community;
      if (inside) members.add(node.id);
      nodeUpdates.push({ id: node.id, opacity: inside ? 1 : 0.12 });
    });
    nodes.update(nodeUpdates);
    edges.update(edges.map(function (edge) {
      return { id: edge.id, hidden: community !== null && !(members.has(edge.from) && members.has(edge.to)) };
    }));
    for (const button of document.querySelectorAll("#legend button.community")) {
      button.setAttribute("aria-pressed", String(Number(button.dataset.community) === community));
    }
    if (community !== null) network.fit({ nodes: Array.from(members), animation: false, maxZoomLevel: 1.6 });
    else network.fit({ maxZoomLevel: 1.6, animation: false });
  }
  for (const button of document.querySelectorAll("#legend button.community")) {
    button.addEventListener("click", function () { pickCommunity(Number(button.dataset.community)); });
  }

  // The tooltip never sits under (or over) the open side panel: it moves to the panel's other side.
  network.on("showPopup", function () {
    const tip = container.querySelector(".vis-tooltip");
    if (!tip || !panel || panel.hidden) return;
    const box = tip.getBoundingClientRect();
    const aside = panel.getBoundingClientRect();
    const overlaps = box.left < aside.right && aside.left < box.right && box.top < aside.bottom && aside.top < box.bottom;
    if (!overlaps) return;
    const frame = container.getBoundingClientRect();
    tip.style.left = Math.max(0, aside.left - frame.left - box.width - 8) + "px";
  });

  const panel = document.getElementById("map-panel");

  function text(tag, content, className) {
    const element = document.createElement(tag);
    element.textContent = content;
    if (className) element.className = className;
    return element;
  }

  function link(href, content) {
    const a = text("a", content);
    a.href = href;
    return a;
  }

  function openPanel(id) {
    const node = nodes.get(id);
    if (!panel || !node) return;
    panel.replaceChildren();
    const close = text("button", "×", "close");
    close.type = "button";
    close.setAttribute("aria-label", "Close");
    close.addEventListener("click", function () { select(null); });
    panel.append(close, text("h2", node.name));
    panel.lastChild.dir = "auto";
    const facts = [];
    if (node.papers !== undefined) facts.push(node.papers.toLocaleString("en") + " paper" + (node.papers === 1 ? "" : "s"));
    if (node.areas && node.areas.length) facts.push(node.areas.join(", "));
    panel.append(text("p", facts.join(" · "), "facts"));
    const top = (neighbours.get(id) || []).slice()
      .sort(function (a, b) { return a[1] === b[1] ? 0 : (b[1] > a[1] ? 1 : -1); }).slice(0, 8);
    if (top.length) {
      panel.append(text("h3", topics ? "Linked topics on this map" : "Top co-authors on this map"));
      const list = document.createElement("ol");
      for (const [other, joint] of top) {
        const item = document.createElement("li");
        const button = text("button", nodes.get(other).name, "linklike");
        button.type = "button";
        button.addEventListener("click", function () { select(other, true); });
        const count = joint === Infinity ? "" : " " + joint.toLocaleString("en") +
          (topics ? " shared author" + (joint === 1 ? "" : "s") : " joint");
        item.append(button, text("span", count, "muted"));
        list.append(item);
      }
      panel.append(list);
    }
    if (typeof node.url === "string" && node.url.startsWith("/")) {
      const actions = document.createElement("p");
      actions.className = "actions";
      actions.append(link(site(node.url), topics ? "Area page" : "Profile"));
      if (node.url.startsWith("/author/")) {
        actions.append(" · ", link(site("/graph/ego" + node.url), "Co-author network"));
      }
      panel.append(actions);
    }
    panel.hidden = false;
  }

  // Escape closes the side panel and clears the selection, as the × button does.
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && selected !== null) select(null);
  });

  function select(id, centre) {
    selected = id;
    if (id === null) {
      network.unselectAll();
      if (panel) panel.hidden = true;
      highlight(null);
      return;
    }
    network.selectNodes([id]);
    highlight(id);
    if (centre) network.focus(id, { scale: Math.max(network.getScale(), 1.0), animation: false });
    openPanel(id);
    network.redraw();
  }

  network.on("click", function (params) {
    if (params.nodes.length !== 1) {
      if (!embedded) select(null);
      return;
    }
    const url = nodes.get(params.nodes[0]).url;
    if (embedded) {
      // Inside the author page's frame: open the co-author in the whole window, not in the frame.
      if (typeof url === "string" && url.startsWith("/")) window.top.location.assign(site(url));
      return;
    }
    select(params.nodes[0], false);
  });
  network.on("doubleClick", function (params) {
    if (params.nodes.length === 1) {
      const url = nodes.get(params.nodes[0]).url;
      if (typeof url === "string" && url.startsWith("/")) window.location.assign(site(url));
    }
  });

  // The wheel zooms only while the map has focus (click or Tab into it); otherwise it scrolls the page.
  const hint = document.getElementById("map-hint");
  container.addEventListener("focusin", function () {
    network.setOptions({ interaction: { zoomView: true } });
    if (hint) hint.hidden = true;
  });
  container.addEventListener("focusout", function () {
    network.setOptions({ interaction: { zoomView: false } });
    if (hint) hint.hidden = false;
  });
  container.addEventListener("pointerdown", function () { container.focus({ preventScroll: true }); });

  // Phones (a coarse pointer): a transparent guard over the map takes one-finger swipes, so they scroll the
  // page as anywhere else; a tap lifts it and the map takes the gestures (drag pans, pinch zooms) until
  // "Done" or a tap outside the map. Desktops keep drag to pan, and the wheel once the map has focus.
  const guard = document.getElementById("map-guard");
  const done = document.getElementById("map-done");
  const area = container.parentElement;
  const touch = window.matchMedia("(pointer: coarse)").matches;
  function guardMap(on) {
    if (!guard || !done) return;
    guard.hidden = !on;
    done.hidden = on;
    if (hint) hint.hidden = true;
    network.setOptions({ interaction: { dragView: !on, zoomView: !on } });
  }
  if (touch && guard && done) {
    guardMap(true);
    guard.addEventListener("click", function () {
      guardMap(false);
      container.focus({ preventScroll: true });
    });
    done.addEventListener("click", function () { guardMap(true); });
    container.addEventListener("focusout", function (event) {
      if (!event.relatedTarget || !area.contains(event.relatedTarget)) guardMap(true);
    });
  }

  for (const button of document.querySelectorAll("[data-zoom]")) {
    button.addEventListener("click", function () {
      const how = button.dataset.zoom;
      if (how === "fit") network.fit({ animation: false });
      else network.moveTo({ scale: network.getScale() * (how === "in" ? 1.5 : 1 / 1.5) });
    });
  }

  const find = document.getElementById("find-author");
  const names = document.getElementById("author-names");
  if (find && names) {
    for (const node of byImportance) names.append(new Option(node.name));
    const go = function () {
      const wanted = find.value.trim().toLowerCase();
      if (!wanted) return;
      const match = byImportance.find(function (n) { return String(n.name).toLowerCase() === wanted; }) ||
        byImportance.find(function (n) { return String(n.name).toLowerCase().startsWith(wanted); }) ||
        byImportance.find(function (n) { return String(n.name).toLowerCase().includes(wanted); });
      find.setCustomValidity(match ? "" : find.dataset.missing || "Nothing of that name on this map");
      find.reportValidity();
      if (match) select(match.id, true);
    };
    find.addEventListener("change", go);
    find.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); go(); }
    });
  }

  const ego = data.nodes.find(function (n) { return n.ego; });
  network.once("afterDrawing", function () {
    // Small maps are shown a little larger than 1:1 (vis-network's own fit stops there); the ego sits at the centre.
    network.fit({ maxZoomLevel: 1.6, animation: false });
    if (ego) network.moveTo({ position: positions[ego.id], animation: false });
    const loading = document.getElementById("map-loading");
    if (loading) loading.hidden = true;
    document.body.dataset.networkReady = "true";
  });
  window.bibgraphNetwork = {
    nodes: nodes,
    edges: edges,
    network: network,
    labels: function () { return drawn; },
    select: select,
    community: function () { return community; },
  };
})();

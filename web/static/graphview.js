// Draws a network view from the JSON that the server embedded (nodes already laid out, physics off).
// Titles are plain strings: vis-network shows them as text, so names can never inject HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const nodes = new vis.DataSet(data.nodes);
  const edges = new vis.DataSet(data.edges);
  const container = document.getElementById("network");
  const network = new vis.Network(container, { nodes: nodes, edges: edges }, data.options);
  network.on("click", function (params) {
    if (params.nodes.length === 1) {
      const url = nodes.get(params.nodes[0]).url;
      if (typeof url === "string" && url.startsWith("/")) {
        window.location.assign(url);
      }
    }
  });
  network.once("afterDrawing", function () {
    document.body.dataset.networkReady = "true";
  });
  window.bibgraphNetwork = { nodes: nodes, edges: edges, network: network };
})();

// The query page: YASGUI pointed at this endpoint, with everything that would reach the
// network switched off: LOV class/property autocompletion (prefixes come from YASGUI's bundled
// list, prefix.cc is never asked); this YASGUI build has no chart or map plugins.
//
// The endpoint is always this server's: YASGUI's own reading of the URL (which honours
// `endpoint=` and runs the query at once) is off, every tab is pointed back here before it
// queries, and only `#query=` is read from the URL, into the editor, without running it.
(function () {
  "use strict";
  const script = document.currentScript;
  // the page's own origin: never a name from the request's Host header or the URL
  const endpoint = new URL(script.dataset.endpoint, window.location.href).href;
  const prefixes = JSON.parse(script.dataset.prefixes);
  const NUMBERS = /#(integer|decimal|double|float|long|int|short|byte|nonNegativeInteger|positiveInteger|string)$/;

  Yasgui.Yasqe.defaults.autocompleters = ["variables", "prefixes"];
  Yasgui.Yasqe.defaults.value = script.dataset.defaultQuery;
  Yasgui.Yasqe.defaults.collapsePrefixesOnLoad = true;
  // Tab leaves the editor (keyboard users are not trapped); Ctrl-] and Ctrl-[ indent instead.
  Yasgui.Yasqe.defaults.extraKeys = Object.assign({}, Yasgui.Yasqe.defaults.extraKeys, {
    Tab: false,
    "Shift-Tab": false,
    "Ctrl-]": "indentMore",
    "Ctrl-[": "indentLess",
  });
  Yasgui.Yasr.defaults.prefixes = prefixes;
  // Numbers and plain strings as their values: `2`, not `"2"^^xsd:integer`.
  const table = Yasgui.Yasr.plugins.table.prototype;
  const formatLiteral = table.formatLiteral;
  table.formatLiteral = function (binding, prefixMap) {
    if (binding.datatype && NUMBERS.test(binding.datatype) && !this.persistentConfig.compact) {
      return formatLiteral.call(this, { type: binding.type, value: binding.value }, prefixMap);
    }
    return formatLiteral.call(this, binding, prefixMap);
  };

  const yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint: endpoint, method: "POST" },
    copyEndpointOnNewTab: false,
    populateFromUrl: false,
    endpointCatalogueOptions: { getData: () => [{ endpoint: endpoint }] },
    persistenceId: "bibgraph-sparql",
  });

  function pin(tab) {
    if (tab && tab.getEndpoint() !== endpoint) {
      tab.setEndpoint(endpoint);
    }
  }
  Object.keys(yasgui._tabs).forEach((id) => pin(yasgui.getTab(id)));
  yasgui.on("tabAdd", (instance, id) => pin(instance.getTab(id)));
  yasgui.on("tabSelect", (instance, id) => pin(instance.getTab(id)));
  yasgui.on("queryBefore", (instance, tab) => pin(tab));

  function show(query) {
    const tab = yasgui.getTab();
    pin(tab);
    tab.setQuery(query);
    tab.getYasqe().collapsePrefixes(true);
    return tab;
  }

  // /sparql?query=… opened in the browser: the server drew the answer under the editor; the query goes in it.
  const fromUrl = new URLSearchParams(window.location.hash.slice(1)).get("query") || script.dataset.query;
  if (fromUrl) {
    show(fromUrl);
    if (window.location.hash) history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  document.querySelectorAll("#examples button").forEach((button) => {
    button.addEventListener("click", () => show(button.dataset.query).query());
  });
  window.bibgraphYasgui = yasgui;
})();

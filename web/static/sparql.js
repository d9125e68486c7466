// The query page: YASGUI pointed at this endpoint, with everything that would reach the
// network switched off: LOV class/property autocompletion (prefixes come from YASGUI's bundled
// list, prefix.cc is never asked); this YASGUI build has no chart or map plugins.
(function () {
  "use strict";
  const script = document.currentScript;
  const endpoint = script.dataset.endpoint;
  Yasgui.Yasqe.defaults.autocompleters = ["variables", "prefixes"];
  Yasgui.Yasqe.defaults.value = script.dataset.defaultQuery;
  Yasgui.Yasr.defaults.prefixes = {};
  const yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint: endpoint, method: "POST" },
    copyEndpointOnNewTab: false,
    endpointCatalogueOptions: { getData: () => [{ endpoint: endpoint }] },
    persistenceId: null,
  });
  document.querySelectorAll("#examples button").forEach((button) => {
    button.addEventListener("click", () => {
      const tab = yasgui.getTab();
      tab.setQuery(button.dataset.query);
      tab.query();
    });
  });
  window.bibgraphYasgui = yasgui;
})();

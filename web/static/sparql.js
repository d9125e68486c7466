// The query page: YASGUI pointed at this endpoint, with everything that would reach the
// network (LOV autocompletion, prefix.cc, chart and map plugins) switched off.
(function () {
  "use strict";
  const script = document.currentScript;
  const endpoint = script.dataset.endpoint;
  Yasgui.Yasqe.defaults.autocompleters = ["variables", "prefixes"];
  Yasgui.Yasqe.defaults.value = script.dataset.defaultQuery;
  Yasgui.Yasr.defaults.plugins = ["table", "response", "boolean", "error"].filter(
    (name) => name in Yasgui.Yasr.plugins
  );
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

// Map forms: folded on phones; the subarea list narrows to the chosen area; author inputs complete names as you type.
(function () {
  "use strict";
  // On a phone the co-author map's filters take a whole screen: folded, the map starts on the first one
  // (with no map, as when no author matches, they stay open: they are what to change).
  const fold = document.getElementById("map-filters");
  const drawn = document.getElementById("network");
  if (fold && drawn && window.matchMedia("(max-width: 600px)").matches) fold.open = false;
  const area = document.getElementById("filter-area");
  const subarea = document.getElementById("filter-subarea");
  if (area && subarea) {
    const narrow = function () {
      for (const option of subarea.options) {
        if (!option.value) continue;
        const fits = !area.value || option.dataset.area === area.value;
        option.hidden = !fits;
        option.disabled = !fits;
        if (!fits && option.selected) subarea.value = "";
      }
    };
    area.addEventListener("change", narrow);
    narrow();
  }
  for (const input of document.querySelectorAll("input[data-complete-authors]")) {
    const list = document.getElementById(input.getAttribute("list"));
    let asked = "";
    input.addEventListener("input", function () {
      const wanted = input.value.trim();
      if (wanted.length < 2 || wanted === asked || wanted.startsWith("http") || wanted.startsWith("author/")) return;
      asked = wanted;
      fetch(input.dataset.completeAuthors + "?q=" + encodeURIComponent(wanted))
        .then(function (response) { return response.ok ? response.json() : []; })
        .then(function (names) {
          if (asked !== wanted) return;
          list.replaceChildren.apply(list, names.map(function (name) { return new Option(name); }));
        })
        .catch(function () {});
    });
  }
})();

// Feedback on slow work: a bar at the top of the window when a map page or a download takes more
// than 300 ms (a cold co-author map of a large corpus takes seconds to derive and lay out).
(function () {
  "use strict";
  const DELAY_MS = 300;
  let timer = null;
  let bar = null;

  function show(message) {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (!bar) {
        bar = document.createElement("div");
        bar.className = "loading-bar";
        bar.setAttribute("role", "status");
        // Styled here: the bar shows on every page, not only where maps.css is loaded.
        bar.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:10;pointer-events:none;padding:.4rem 1rem;" +
          "color:#fff;font-weight:600;background:#0b57d0;box-shadow:0 2px 6px rgba(0,0,0,.2)";
        document.body.append(bar);
      }
      bar.textContent = message;
      bar.hidden = false;
    }, DELAY_MS);
  }

  function hide() {
    clearTimeout(timer);
    if (bar) bar.hidden = true;
  }

  // The app's path behind a reverse proxy's prefix ("/bib/"), from the page head.
  const root = (document.querySelector('meta[name="bibgraph-root"]') || { content: "/" }).content;

  function slow(url) {
    return url.origin === location.origin && url.pathname.startsWith(root + "graph/");
  }

  document.addEventListener("click", function (event) {
    const a = event.target.closest ? event.target.closest("a[href]") : null;
    if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const url = new URL(a.href, location.href);
    if (!slow(url) || a.target === "_blank") return;
    if (a.hasAttribute("data-download")) {
      // Fetch the file so that the page can say when it is ready, then hand it to the browser.
      event.preventDefault();
      show("Preparing the download…");
      fetch(url).then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        const disposition = response.headers.get("Content-Disposition") || "";
        const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || "download";
        return response.blob().then(function (blob) {
          const save = document.createElement("a");
          save.href = URL.createObjectURL(blob);
          save.download = name;
          document.body.append(save);
          save.click();
          save.remove();
          setTimeout(function () { URL.revokeObjectURL(save.href); }, 10000);
          hide();
        });
      }).catch(function (error) {
        hide();
        show("The download failed: " + error.message);
      });
      return;
    }
    show("Building the map… the first time takes a few seconds on a large corpus.");
  });
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (slow(new URL(form.action || location.href, location.href))) show("Building the map…");
  });
  window.addEventListener("pageshow", hide);
})();

// Renders $…$ and $$…$$ in the abstract with KaTeX (served by the app); the text was escaped
// by the server, and KaTeX builds math from it, never HTML.
(function () {
  "use strict";
  const abstract = document.getElementById("abstract");
  if (abstract && window.renderMathInElement) {
    window.renderMathInElement(abstract, {
      delimiters: [
        { left: "$$", right: "$$", display: true },
        { left: "$", right: "$", display: false },
      ],
      throwOnError: false,
      trust: false,
    });
  }
})();

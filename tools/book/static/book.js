// The language switch leads to the same section of the other edition's page: every section
// carries an ordinal anchor (<span id="s-k">, tools/book/extension.py), the same k in both
// editions; the link gets the k of the section being read (its heading the last one at or above
// the top of the window) and the page's query (the search page's words).
(function () {
  "use strict";
  const TOP = 80; // px below the window's top that still counts as "being read"
  function currentAnchor() {
    let chosen = null;
    for (const anchor of document.querySelectorAll('article span[id^="s-"]')) {
      if (anchor.parentElement.getBoundingClientRect().top > TOP) break;
      chosen = anchor;
    }
    return chosen;
  }
  function update(link, base) {
    const anchor = currentAnchor();
    link.href = base + window.location.search + (anchor && anchor.id !== "s-1" ? "#" + anchor.id : "");
  }
  document.addEventListener("DOMContentLoaded", function () {
    const link = document.querySelector("a.book-lang-switch-link");
    if (!link) return;
    const base = link.getAttribute("href").split("#")[0].split("?")[0];
    const refresh = function () { update(link, base); };
    ["click", "mouseenter", "focus", "auxclick", "contextmenu"].forEach(function (name) {
      link.addEventListener(name, refresh);
    });
    window.addEventListener("hashchange", refresh);
    refresh();
  });
})();

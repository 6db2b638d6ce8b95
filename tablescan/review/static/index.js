// tablescan review: the games list. The server writes each time as ISO UTC; shown here in the viewer's own time.
(function () {
  "use strict";
  function localTimes() {
    for (const node of document.querySelectorAll("time.local-time[datetime]")) {
      const when = new Date(node.getAttribute("datetime"));
      if (Number.isNaN(when.getTime())) continue;
      node.textContent = when.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
      node.title = node.getAttribute("datetime");
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", localTimes); else localTimes();
})();

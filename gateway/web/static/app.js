// Mission control's own script: times in the viewer's zone, the feed's "nothing new" line, and a
// flash on rows that are new after a live refresh. The pages work without it (server-rendered,
// UTC times; the graphs are server-rendered SVG).
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", timeZoneName: "short"
  });

  var short = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

  // <time datetime="…Z" title="… UTC">: show local time (in the feed: the time of day only);
  // the title keeps UTC for hover.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      var brief = el.closest && el.closest("#feed");
      if (!isNaN(d)) { el.textContent = (brief ? short : fmt).format(d); el.setAttribute("data-local", "1"); }
    });
  }

  // Rows that are new after a live refresh flash once.
  var kept = {};
  document.addEventListener("htmx:beforeSwap", function (ev) {
    kept = {};
    ev.detail.target.querySelectorAll("[data-key]").forEach(function (el) { kept["key:" + el.getAttribute("data-key")] = true; });
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (Object.keys(kept).length) {
      document.querySelectorAll("#live [data-key]").forEach(function (el) {
        if (!kept["key:" + el.getAttribute("data-key")]) { el.classList.add("fresh"); }
      });
    }
    localTimes(document);
    kept = {};
  });
  document.addEventListener("htmx:sseMessage", function () {
    localTimes(document.getElementById("feed") || document);
    ["feed-quiet", "feed-empty"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.hidden = true; }
    });
  });
  // Say whether the event stream is connected (text, not just a colour).
  function liveState(state, text) {
    document.body.setAttribute("data-live", state);
    var el = document.getElementById("live-state");
    if (el) { el.textContent = text; }
  }
  // After a reconnect, events of the gap were not seen: fetch the live region once from the server.
  var opened = 0;
  document.addEventListener("htmx:sseOpen", function () {
    liveState("open", "● Live: connected to the graph's event stream.");
    opened += 1;
    var live = document.getElementById("live");
    if (opened > 1 && live) {
      htmx.ajax("GET", live.getAttribute("hx-get"), { target: "#live", select: "#live", swap: "outerHTML" });
    }
  });
  document.addEventListener("htmx:sseError", function () { liveState("error", "○ Live updates interrupted; reconnecting…"); });
  document.addEventListener("DOMContentLoaded", function () {
    if (document.getElementById("live-state")) { liveState("connecting", "○ Connecting to live updates…"); }
    localTimes(document);
  });
})();

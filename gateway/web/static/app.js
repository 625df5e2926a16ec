// Mission control's own script: times in the viewer's zone, the world drawing (the incident
// graph is server-rendered SVG), the feed's "nothing new" line, and a flash on rows that are new
// after a live refresh. The pages work without it (server-rendered, UTC times).
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", timeZoneName: "short"
  });

  // <time datetime="…Z" title="… UTC">: show local time; the title keeps UTC for hover.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) { el.textContent = fmt.format(d); el.setAttribute("data-local", "1"); }
    });
  }

  var STYLE = [
    { selector: "node", style: { "label": "data(label)", "font-size": 11, "text-wrap": "wrap",
      "text-valign": "bottom", "text-margin-y": 4, "background-color": "#8c959f",
      "width": 18, "height": 18, "shape": "ellipse" } },
    { selector: "node.ruled-out", style: { "shape": "vee", "background-color": "#ccd1d6" } },
    { selector: "node.alerting", style: { "shape": "triangle", "background-color": "#a40e26", "width": 24, "height": 24 } },
    { selector: "node.candidate", style: { "border-width": 3, "border-color": "#0b5cad" } },
    { selector: "node.root", style: { "shape": "diamond", "background-color": "#c2410c", "width": 30, "height": 30, "font-weight": "bold" } },
    { selector: "edge", style: { "width": 1, "line-color": "#aab2bb", "target-arrow-color": "#aab2bb",
      "target-arrow-shape": "triangle", "curve-style": "bezier", "line-style": "solid" } },
    { selector: "edge.other-purpose", style: { "line-style": "dashed" } },
    { selector: "edge.path", style: { "width": 5, "line-color": "#c2410c", "target-arrow-color": "#c2410c",
      "z-index": 10 } }
  ];

  function worldElements(data) {
    var els = [], names = {};
    data.components.forEach(function (c) { names[c.name] = true; });
    data.components.forEach(function (c) {
      els.push({ data: { id: c.name, label: c.name + (c.owners.length ? "" : "\n⚠ no owner") } });
      c.edges.forEach(function (e) {
        if (!names[e[0]]) { return; }
        els.push({ data: { id: c.name + ">" + e[0] + ":" + e[1], source: c.name, target: e[0] },
          classes: e[2] && e[2] !== "business" ? "other-purpose" : "" });
      });
    });
    return els;
  }

  window.blastGraphs = window.blastGraphs || {};

  function draw(root) {
    if (typeof cytoscape === "undefined") { return; }
    root.querySelectorAll("script.graph-data").forEach(function (script) {
      var id = script.getAttribute("data-for");
      var box = document.getElementById(id);
      if (!box || box.getAttribute("data-drawn")) { return; }
      var data = JSON.parse(script.textContent);
      var cy = cytoscape({ container: box, elements: worldElements(data), style: STYLE,
        layout: { name: "breadthfirst", directed: true, spacingFactor: 1.1, padding: 20 } });
      box.setAttribute("data-drawn", "1");
      box.setAttribute("data-path-edges", String(cy.edges(".path").length));
      box.setAttribute("data-json", script.textContent);
      window.blastGraphs[id] = cy;
    });
  }

  // Keep a drawing across a live refresh when its data did not change (no jump, no redraw).
  var kept = {};
  document.addEventListener("htmx:beforeSwap", function (ev) {
    kept = {};
    ev.detail.target.querySelectorAll(".graph[data-drawn]").forEach(function (box) { kept[box.id] = box; });
    ev.detail.target.querySelectorAll("[data-key]").forEach(function (el) { kept["key:" + el.getAttribute("data-key")] = true; });
  });
  document.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll("script.graph-data").forEach(function (script) {
      var id = script.getAttribute("data-for"), old = kept[id], box = document.getElementById(id);
      if (old && box && !box.getAttribute("data-drawn") && old.getAttribute("data-json") === script.textContent) {
        box.replaceWith(old);
      }
    });
    if (Object.keys(kept).length) {
      document.querySelectorAll("#live [data-key]").forEach(function (el) {
        if (!kept["key:" + el.getAttribute("data-key")]) { el.classList.add("fresh"); }
      });
    }
    localTimes(document);
    draw(document);
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
    draw(document);
  });
})();

// fabriclab live view: draws the fabric with cytoscape.js and colours it from snapshots.
// Live: polls the SM's server (api/snapshot, api/events). Replay: reads the recording
// that data.js hands over (window.FABRICLAB_VIEW). Schema: docs/liveview.md.
(function () {
  "use strict";

  var VIEW = window.FABRICLAB_VIEW || { mode: "live" };
  var POLL_MS = 500;
  var STALE_MS = 3000;
  var cy = null;
  var fabric = null;
  var current = null;
  var events = [];
  var lastEvent = 0;
  var lastSampleAt = 0;
  var selected = null;

  function $(id) { return document.getElementById(id); }

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function clock(tNs) {
    if (!tNs) return "";
    var d = new Date(tNs / 1e6);
    return d.toLocaleTimeString([], { hour12: false }) + "." +
      String(d.getMilliseconds()).padStart(3, "0");
  }

  function pct(x) { return x === null || x === undefined ? "-" : Math.round(x * 100) + "%"; }
  function num(x) { return x === null || x === undefined ? "-" : String(x); }

  // ------------------------------------------------------------------ drawing

  var STYLE = [
    { selector: "node[kind = 'switch']", style: {
      shape: "round-rectangle", width: 74, height: 44, "border-width": 2,
      "border-color": "#0969da", "background-color": "mapData(fill, 0, 1, #dbe9ff, #fb8500)",
      label: "data(label)", "text-wrap": "wrap", "text-valign": "center", "font-size": 11 } },
    { selector: "node[kind = 'host']", style: {
      shape: "ellipse", width: 30, height: 30, "background-color": "#eaeef2",
      "border-width": 1, "border-color": "#8c959f", label: "data(id)", "text-valign": "center",
      "font-size": 10 } },
    { selector: "node.unreachable", style: {
      "border-color": "#cf222e", "border-style": "dashed", "background-color": "#ffebe9" } },
    { selector: "edge", style: {
      "curve-style": "bezier", width: "mapData(load, 0, 1, 2, 12)",
      "line-color": "mapData(load, 0, 1, #afb8c1, #1f6feb)", label: "data(label)",
      "font-size": 9, "text-background-color": "#ffffff", "text-background-opacity": 0.85,
      "source-label": "data(aEnd)", "target-label": "data(bEnd)",
      "source-text-offset": 22, "target-text-offset": 22, color: "#1f2328" } },
    { selector: "edge.blocked", style: { "line-color": "#fb8500" } },
    { selector: "edge.failed", style: {
      "line-color": "#cf222e", "line-style": "dashed", width: 4, color: "#cf222e" } },
    { selector: "edge.unknown", style: { "line-color": "#d0d7de", "line-style": "dotted" } },
    { selector: ":selected", style: { "overlay-color": "#0969da", "overlay-opacity": 0.2 } }
  ];

  function elements(doc) {
    var out = [];
    doc.nodes.forEach(function (n) {
      out.push({ group: "nodes", data: { id: n.id, kind: n.kind, tier: n.tier,
        label: n.label ? n.id + " (" + n.label + ")" : n.id, fill: 0 } });
    });
    doc.links.forEach(function (l) {
      out.push({ group: "edges", data: { id: l.id, source: l.a, target: l.b, link: l,
        load: 0, label: "", aEnd: "", bEnd: "" } });
    });
    return out;
  }

  function byName(a, b) {
    var ka = a.match(/^(\D*)(\d*)$/) || [a, a, ""], kb = b.match(/^(\D*)(\d*)$/) || [b, b, ""];
    if (ka[1] !== kb[1]) return ka[1] < kb[1] ? -1 : 1;
    return (Number(ka[2]) || 0) - (Number(kb[2]) || 0);
  }

  function layoutFor(doc) {
    var top = Math.max.apply(null, doc.nodes.filter(function (n) { return n.kind === "switch"; })
      .map(function (n) { return n.tier; }).concat([0]));
    if (top > 0) {
      var roots = doc.nodes.filter(function (n) { return n.kind === "switch" && n.tier === top; })
        .map(function (n) { return "#" + CSS.escape(n.id); }).join(",");
      // within a tier, by name (s2 before s10): a fat tree's pods stay side by side
      return { name: "breadthfirst", roots: roots, spacingFactor: 1.1, animate: false,
        depthSort: function (a, b) { return byName(a.id(), b.id()); } };
    }
    return { name: "cose", randomize: false, animate: false, nodeRepulsion: 8000 };
  }

  function draw(doc) {
    fabric = doc;
    $("title").textContent = "fabriclab live view: " + doc.fabric;
    cy = cytoscape({ container: $("graph"), elements: elements(doc), style: STYLE,
      layout: layoutFor(doc), wheelSensitivity: 0.3 });
    cy.on("tap", "node, edge", function (evt) { selected = evt.target.id(); showDetail(); });
    cy.on("tap", function (evt) { if (evt.target === cy) { selected = null; showDetail(); } });
    window.addEventListener("resize", function () { cy.resize(); cy.fit(undefined, 20); });
    window.fabriclabView.cy = cy;
  }

  function endMark(port) {
    if (!port) return "";
    var marks = [];
    if (port.paused) marks.push("P");
    if (port.blocked) marks.push("B");
    if (port.buffer) marks.push(String(port.buffer));
    return marks.join(" ");
  }

  function apply(snap) {
    current = snap;
    if (!cy || !snap || !snap.links) return;
    cy.batch(function () {
      cy.edges().forEach(function (edge) {
        var l = edge.data("link");
        var s = snap.links[l.id] || { state: "unknown", util: [null, null] };
        var util = (s.util || []).filter(function (u) { return u !== null; });
        var load = util.length ? Math.min(1, Math.max.apply(null, util)) : 0;
        var ends = [snap.ports[l.a + ":" + l.a_port], snap.ports[l.b + ":" + l.b_port]];
        var blocked = ends.some(function (p) { return p && (p.blocked || p.paused); });
        // a cable's figures only where it carries something: an idle fat tree stays legible
        edge.data({ load: load, aEnd: endMark(ends[0]), bEnd: endMark(ends[1]),
          label: s.state === "down" ? "FAILED" :
            load >= 0.005 ? pct(s.util[0]) + " / " + pct(s.util[1]) : "" });
        edge.toggleClass("failed", s.state === "down");
        edge.toggleClass("unknown", s.state === "unknown");
        edge.toggleClass("blocked", s.state !== "down" && blocked);
      });
      cy.nodes("[kind = 'switch']").forEach(function (node) {
        var sw = snap.switches[node.id()] || { reachable: false, error: "not in the sample" };
        var lines = [node.id()];
        if (sw.mode) lines.push(sw.mode);
        if (sw.buffer) lines.push("buf " + sw.buffer);
        if (!sw.reachable) lines.push("NO ANSWER");
        var capacity = fabric.links.filter(function (l) { return l.a === node.id() || l.b === node.id(); })
          .reduce(function (sum, l) { return sum + (l.buffer_pkts || 0); }, 0);
        node.data({ label: lines.join("\n"),
          fill: sw.buffer && capacity ? Math.min(1, sw.buffer / capacity) : 0 });
        node.toggleClass("unreachable", !sw.reachable);
      });
    });
    showProblems(snap);
    showUnavailable(snap.unavailable || []);
    showDetail();
  }

  function showProblems(snap) {
    var list = $("problems");
    list.textContent = "";
    var items = [];
    Object.keys(snap.links).sort().forEach(function (id) {
      var l = snap.links[id];
      if (l.state === "down") items.push(["error", "failed link " + id + ": " + l.down_by.join("; ")]);
    });
    Object.keys(snap.switches).sort().forEach(function (name) {
      var s = snap.switches[name];
      if (!s.reachable) items.push(["error", name + " does not answer: " + s.error]);
    });
    Object.keys(snap.ports).sort().forEach(function (key) {
      var p = snap.ports[key];
      if (p.paused) items.push(["warn", key + " paused (" + p.pause_rx + " pause frames)"]);
      else if (p.blocked) items.push(["warn", key + " " + blockedWord(snap, key) + " " +
        pct(p.blocked_share) + " of the last sample"]);
      if (p.drops) {
        var why = Object.keys(p.drop_reasons || {}).sort().map(function (r) {
          return r + " " + p.drop_reasons[r];
        }).join(", ");
        items.push(["warn", key + " dropped " + p.drops + " frames so far (" + why + ")"]);
      }
    });
    if (!items.length) items.push(["", "every link up, nothing blocked, nothing dropped"]);
    items.forEach(function (it) {
      var li = el("li", it[1], it[0]);
      if (it[0] === "error" && it[1].indexOf("failed link ") === 0) li.dataset.failedLink = it[1].split(" ")[2].replace(/:$/, "");
      list.appendChild(li);
    });
  }

  // what holds a queue's head depends on the switch's mode: credit (CREDIT), a pause (PFC)
  function blockedWord(snap, key) {
    var sw = snap.switches[key.split(":")[0]] || {};
    return sw.mode === "CREDIT" ? "credit-blocked" : sw.mode === "PFC" ? "pause-blocked" : "blocked";
  }

  function showUnavailable(lines) {
    var list = $("unavailable");
    list.textContent = "";
    lines.forEach(function (line) { list.appendChild(el("li", "not shown: " + line)); });
  }

  function portRow(table, key, peer) {
    var p = (current && current.ports[key]) || {};
    var state = p.down ? "down" : p.paused ? "paused" : p.blocked ? blockedWord(current, key) : "";
    var tr = el("tr");
    [key.split(":")[1], peer, num(p.tx_pps), pct(p.util), num(p.rx_pps), state,
      num(p.buffer), num(p.queued), num(p.drops)].forEach(function (v) { tr.appendChild(el("td", v)); });
    table.appendChild(tr);
  }

  function showDetail() {
    var box = $("detail");
    box.textContent = "";
    if (!selected || !cy) { box.textContent = "click a switch or a link"; return; }
    var item = cy.getElementById(selected);
    var table = el("table");
    var head = el("tr");
    ["port", "peer", "tx/s", "util", "rx/s", "state", "buffer", "queued", "drops"]
      .forEach(function (h) { head.appendChild(el("th", h)); });
    table.appendChild(head);
    if (item.isEdge()) {
      var l = item.data("link");
      var s = (current && current.links[l.id]) || {};
      box.appendChild(el("div", "link " + l.id + " (" + l.rate_pps + " frames/s): " +
        (s.state || "?") + (s.down_by && s.down_by.length ? " - " + s.down_by.join("; ") : "")));
      portRow(table, l.a + ":" + l.a_port, l.b);
      portRow(table, l.b + ":" + l.b_port, l.a);
    } else {
      var sw = (current && current.switches[selected]) || {};
      box.appendChild(el("div", selected + (sw.mode ? " (" + sw.mode + ")" : "") +
        (sw.reachable === false ? ": no answer: " + sw.error : "")));
      fabric.links.forEach(function (l) {
        if (l.a === selected) portRow(table, l.a + ":" + l.a_port, l.b);
        if (l.b === selected) portRow(table, l.b + ":" + l.b_port, l.a);
      });
    }
    box.appendChild(table);
  }

  // -------------------------------------------------------------------- events

  function showEvents(upTo) {
    var list = $("events");
    var withFc = $("show-fc").checked;
    list.textContent = "";
    events.filter(function (e) {
      return (withFc || e.kind !== "flow_control") && (upTo === undefined || e.sample <= upTo);
    }).slice(-300).reverse().forEach(function (e) {
      var li = el("li", "", e.severity);
      li.appendChild(el("span", clock(e.t_ns) + " ", "time"));
      li.appendChild(document.createTextNode("[" + e.kind + "] " + e.text));
      list.appendChild(li);
    });
  }

  // ---------------------------------------------------------------------- live

  function getJson(url) {
    return fetch(url, { cache: "no-store" }).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.json();
    });
  }

  function setStatus(text, stale) {
    var status = $("status");
    status.textContent = text;
    status.classList.toggle("stale", !!stale);
  }

  function poll() {
    Promise.all([getJson("api/snapshot"), getJson("api/events?since=" + lastEvent)])
      .then(function (answers) {
        var snap = answers[0], news = answers[1];
        if (news.events.length) {
          events = events.concat(news.events);
          lastEvent = news.last;
          showEvents();
        }
        if (snap.seq && (!current || snap.seq !== current.seq)) {
          lastSampleAt = Date.now();
          apply(snap);
        }
        if (!snap.seq) setStatus("waiting for the first sample");
        else if (Date.now() - lastSampleAt > STALE_MS)
          setStatus("no new sample for " + Math.round((Date.now() - lastSampleAt) / 1000) + " s", true);
        else setStatus("sample " + snap.seq + " at " + clock(snap.t_ns) + ", read in " + snap.sample_ms + " ms");
      })
      .catch(function (err) { setStatus("the SM does not answer (" + err.message + ")", true); })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  function startLive() {
    $("mode").textContent = "LIVE";
    getJson("api/fabric").then(function (doc) { draw(doc); poll(); })
      .catch(function (err) {
        setStatus("cannot load the fabric (" + err.message + "); retrying", true);
        setTimeout(startLive, 2000);
      });
  }

  // -------------------------------------------------------------------- replay

  function startReplay() {
    var snaps = VIEW.snapshots || [];
    var timer = null;
    $("mode").textContent = "REPLAY";
    $("mode").classList.add("replay");
    $("replay").hidden = false;
    events = VIEW.events || [];
    draw(VIEW.fabric);
    var slider = $("position");
    slider.max = Math.max(0, snaps.length - 1);

    function show(i) {
      i = Math.max(0, Math.min(snaps.length - 1, i));
      slider.value = i;
      var snap = snaps[i];
      if (!snap) { setStatus("the recording holds no sample"); showEvents(); return; }
      apply(snap);
      showEvents(snap.seq);
      $("position-label").textContent = "sample " + (i + 1) + " / " + snaps.length;
      setStatus("replay of " + VIEW.run + ": sample " + snap.seq + " at " + clock(snap.t_ns) +
        ((VIEW.problems || []).length ? " (" + VIEW.problems.length + " recording lines skipped)" : ""));
    }

    slider.addEventListener("input", function () { show(Number(slider.value)); });
    $("play").addEventListener("click", function () {
      if (timer) { clearInterval(timer); timer = null; $("play").textContent = "play"; return; }
      if (Number(slider.value) >= snaps.length - 1) show(0);
      $("play").textContent = "pause";
      timer = setInterval(function () {
        var next = Number(slider.value) + 1;
        if (next >= snaps.length) { clearInterval(timer); timer = null; $("play").textContent = "play"; return; }
        show(next);
      }, POLL_MS);
    });
    window.fabriclabView.show = show;
    // index.html#sample=N opens the replay at its Nth sample (a link to a moment)
    var asked = /sample=(\d+)/.exec(window.location.hash);
    show(asked ? Number(asked[1]) - 1 : 0);
  }

  window.fabriclabView = {
    mode: VIEW.mode,
    snapshot: function () { return current; },
    failedLinks: function () {
      return cy ? cy.edges(".failed").map(function (e) { return e.id(); }).sort() : [];
    }
  };
  $("show-fc").addEventListener("change", function () {
    showEvents(VIEW.mode === "replay" && current ? current.seq : undefined);
  });
  if (VIEW.mode === "replay") startReplay(); else startLive();
})();

// wopeval viewer: keyboard navigation of the trial grid and live cells over SSE. No deps.
(function () {
  "use strict";
  function cells() { return Array.prototype.slice.call(document.querySelectorAll("#grid a.cell")); }
  function at(row, col) {
    return document.querySelector('#grid a.cell[data-row="' + row + '"][data-col="' + col + '"]');
  }
  document.addEventListener("keydown", function (ev) {
    var cur = document.activeElement;
    if (!cur || !cur.classList || !cur.classList.contains("cell")) {
      if (ev.key === "g" && cells().length) { cells()[0].focus(); ev.preventDefault(); }
      return;
    }
    var row = +cur.dataset.row, col = +cur.dataset.col;
    var moves = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0],
                  l: [0, 1], h: [0, -1], j: [1, 0], k: [-1, 0] };
    var move = moves[ev.key];
    if (!move) { return; }
    var next = at(row + move[0], col + move[1]);
    if (next) { next.focus(); ev.preventDefault(); }
  });
  // The runs list: "compare" is offered once exactly two runs are ticked, "cost against success"
  // once one is.
  var picker = document.getElementById("compare-ticked");
  if (picker) {
    var ticked = function () { return document.querySelectorAll('input[name="run"]:checked').length; };
    var note = document.getElementById("pick-note");
    var update = function () {
      var n = ticked();
      picker.disabled = n !== 2;
      var pareto = document.getElementById("pareto-ticked");
      if (pareto) { pareto.disabled = n < 1; }
      if (note) { note.textContent = n === 2 ? "the older is the baseline" : "tick two runs (" + n + " ticked)"; }
    };
    document.addEventListener("change", function (ev) {
      if (ev.target && ev.target.name === "run") { update(); }
    });
    update();
  }
  var grid = document.getElementById("grid");
  if (!grid || !grid.dataset.live) { return; }
  var source = new EventSource(grid.dataset.live);
  source.addEventListener("cell", function (ev) {
    var d = JSON.parse(ev.data);
    var row = document.querySelector('#grid tr[data-task="' + CSS.escape(d.task) + '"]');
    if (!row) { return; }
    var cell = row.querySelector('a.cell[data-col="' + d.trial + '"]');
    if (!cell) { return; }
    cell.className = "cell c-" + d.status;
    cell.dataset.status = d.status;
    cell.textContent = d.mark;
    cell.title = "trial " + d.trial + ": " + d.status + (d.message ? ": " + d.message : "");
    var passed = row.querySelector("td.passed");
    if (passed) {
      var all = row.querySelectorAll("a.cell");
      passed.textContent = row.querySelectorAll('a.cell[data-status="pass"]').length + "/" + all.length;
    }
    var count = document.getElementById("finished");
    if (count) { count.textContent = document.querySelectorAll('#grid a.cell:not([data-status="pending"])').length; }
  });
  // The page's numbers and curves, fetched again: the summary, the run line, each task's
  // columns but its cells (which the events fill, and which may hold the focus), the curves.
  function swap(fresh, id) {
    var mine = document.getElementById(id), theirs = fresh.getElementById(id);
    if (mine && theirs) { mine.replaceWith(document.importNode(theirs, true)); }
  }
  var generation = 0;  // a slow answer never overwrites a newer one
  function refresh(final) {
    var mine = ++generation;
    return fetch(location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.text(); })
      .then(function (html) {
        if (mine !== generation) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        ["run-meta", "summary", "suite-curves"].forEach(function (id) { swap(fresh, id); });
        fresh.querySelectorAll("#grid tbody tr[data-task]").forEach(function (tr) {
          var row = document.querySelector('#grid tr[data-task="' + CSS.escape(tr.dataset.task) + '"]');
          if (!row) { return; }
          tr.querySelectorAll("td[data-col]").forEach(function (td) {
            var old = row.querySelector('td[data-col="' + td.dataset.col + '"]');
            if (old) { old.replaceWith(document.importNode(td, true)); }
          });
        });
      })
      .catch(function () {
        var note = document.getElementById("live-note");
        if (final && note) { note.hidden = false; }
      });
  }
  var pending = null;
  source.addEventListener("cell", function () {
    if (pending === null) { pending = setTimeout(function () { pending = null; refresh(false); }, 1000); }
  });
  source.addEventListener("done", function (ev) {
    var d = JSON.parse(ev.data);
    var status = document.getElementById("run-status");
    if (status) { status.textContent = d.status; }
    var badge = document.getElementById("status-badge");
    if (badge) { badge.textContent = d.status; badge.className = "verdict v-" + d.status; }
    source.close();
    if (pending !== null) { clearTimeout(pending); pending = null; }
    refresh(true);
  });
})();

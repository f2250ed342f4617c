"""The detail rows of a large report, kept once as compact JSON in the page and drawn on demand.

A 1,000-host validate or smoke holds some 100,000 results: as one DOM table that is tens of MB and
a browser stalls on it, though a person reads a handful of rows (the failures, one host). So above
``INLINE_ROWS`` results the HTML report (racfg.results.html) writes every result once into a
``<script type="application/json">`` block and a few lines of plain JavaScript draw one target's rows
when asked (a matrix cell, a host link, the filter box), the failures' targets at load. The JSON
interns every string (targets, check ids with their target taken out, categories, messages, fixes) in
one table, so 1,000 hosts that run the same checks cost little more than their distinct text.
Below the bound every row is in the DOM, so a small report reads without JavaScript.
"""

from __future__ import annotations

import json

from racfg.results.model import Report, Result
from racfg.results.wording import clean

INLINE_ROWS = 2000  # up to this many results the table is written out; above, rows are drawn on demand
STATUS_CODES = ("fail", "error", "skip", "info", "pass")


def packed_rows(report: Report) -> str:
    """The results in reading order (``Report.sorted_results``) as compact JSON, safe inside ``<script>``:
    ``{"s": [strings], "r": [[status, target, check, category, expected, actual, message, fix, cause]]}``,
    each field an index into ``s`` (0 is the empty string); a check id holds its target as a tab."""
    strings: dict[str, int] = {"": 0}

    def ref(text: object) -> int:
        value = clean(text)
        found = strings.get(value)
        if found is None:
            found = strings[value] = len(strings)
        return found

    rows = [[STATUS_CODES.index(str(r.status)), ref(r.target), ref(_check_without_target(r)), ref(r.category),
             ref(r.expected), ref(r.actual), ref(r.message), ref(r.fix), ref(r.cause)]
            for r in report.sorted_results()]
    text = json.dumps({"s": list(strings), "r": rows}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _check_without_target(result: Result) -> str:
    check, target = clean(result.check), clean(result.target)
    if not target or "\t" in check:
        return check
    return check.replace(target, "\t")


# Draws rows into ``table.results`` on demand: ``show(pred, limit)`` renders the targets that hold a row
# matching ``pred`` (every row of such a target, failures first as stored). The filter box (Enter), a
# matrix link (``#h=host`` or ``#h=host&c=category``) and the load (targets with a failure or an error) call it.
JS = """
(function () {
  var data = JSON.parse(document.getElementById("rows").textContent), S = data.s, R = data.r;
  var ST = ["fail", "error", "skip", "info", "pass"], LB = ["FAIL", "ERROR", "SKIP", "INFO", "PASS"];
  var table = document.querySelector("table.results"), note = document.getElementById("drawn");
  function e(t) { return t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"); }
  function host(t) { return t.split(":")[0]; }
  function row(r) {
    var t = S[r[1]], fix = S[r[7]], cause = S[r[8]];
    return '<tr class="r ' + ST[r[0]] + '" data-status="' + ST[r[0]] + '"' +
      (cause ? ' data-cause="' + e(cause) + '"' : "") + '><td><span class="st ' + ST[r[0]] + '">' + LB[r[0]] +
      '</span></td><td class="check">' + e(S[r[2]].split("\\t").join(t)) + "</td><td>" + e(S[r[3]]) +
      '</td><td class="text">' + e(S[r[4]]) + '</td><td class="text">' + e(S[r[5]]) + '</td><td class="text">' +
      e(S[r[6]]) + '</td><td class="fix">' + (fix ? "<code>" + e(fix) + "</code>" : "") + "</td></tr>";
  }
  window.racfgShow = function (pred, limit, what) {
    var order = [], seen = {}, rows = {}, i, r, t;
    for (i = 0; i < R.length; i++) {
      r = R[i]; t = S[r[1]];
      if (!rows[t]) { rows[t] = []; }
      rows[t].push(r);
      if (!seen[t] && pred(r, t)) { seen[t] = true; order.push(t); }
    }
    var html = [];
    order.slice(0, limit).forEach(function (t) {
      html.push('<tbody class="target" data-target="' + e(t) + '" data-host="' + e(host(t)) +
        '"><tr class="group"><th colspan="7">' + e(t) + "</th></tr>" +
        rows[t].filter(function (r) { return pred(r, t); }).map(row).join("") + "</tbody>");
    });
    table.querySelectorAll("tbody").forEach(function (b) { b.remove(); });
    table.insertAdjacentHTML("beforeend", html.join(""));
    note.textContent = order.length > limit ?
      "showing " + limit + " of " + order.length + " targets: narrow the filter" :
      order.length + " target" + (order.length === 1 ? "" : "s") + " drawn (" + what + ")";
    if (window.racfgApply) { window.racfgApply(); }
  };
  window.racfgHost = function (h, c) {
    window.racfgShow(function (r, t) { return host(t) === h && (!c || S[r[3]] === c); }, 200,
      h + (c ? " / " + c : ""));
  };
  window.racfgText = function (q) {
    q = q.toLowerCase();
    window.racfgShow(function (r, t) {
      return !q ? r[0] < 2 : (t + " " + S[r[2]] + " " + S[r[6]]).toLowerCase().indexOf(q) >= 0;
    }, 100, q ? "matching " + q : "targets with a failure or an error");
  };
})();
"""

"""A self-contained HTML5 report: one file to attach to a ticket, mail, or open from a CI artifact.

Everything is inline (CSS, a few lines of JS, PNG plots as base64), nothing is fetched, so it
opens the same from a laptop's Downloads folder as on an air-gapped cluster. It reads at a
glance at any size: the summary as coloured badges, then the problems, the host x category matrix
(racfg.results.site_matrix), the fabric drawn with each link's figure (racfg.results.fabric_drawing),
the heat map and trends where the run has them (racfg.results.figure_views), the skips grouped by
reason, then the rows: red/amber/grey/green for fail/error/skip/pass, the fix next to each failure.
Up to ``row_store.INLINE_ROWS`` results every row is in the page (shown without JavaScript; with it
the status buttons and the text box filter them); above, rows are drawn on demand from one compact
JSON block (racfg.results.row_store), so a 1,000-host report stays a few MB. Every piece of result text is escaped with
``html.escape`` (control characters cleaned first), so captured output cannot break the page.
Problems (the diagnosis) come first, each with its cause, fix and the failures it explains; every
row a problem holds carries ``data-cause`` with the problem's id.
"""

from __future__ import annotations

import base64
import html
import json
import mimetypes
from pathlib import Path

from racfg.results import row_store
from racfg.results.fabric_drawing import fabric_svg
from racfg.results.figure_views import heatmap_html, trends_html
from racfg.results.model import Report, Result, Status
from racfg.results.site_matrix import host_of, matrix_html
from racfg.results.wording import (
    STATUS_LABEL,
    ProblemView,
    TargetGroup,
    by_target,
    clean,
    count_phrase,
    headline,
    problem_views,
    skip_groups,
    title,
)

_READING_ORDER = (Status.FAIL, Status.ERROR, Status.SKIP, Status.INFO, Status.PASS)
_COLUMNS = ("Status", "Check", "Category", "Expected", "Actual", "Message", "Fix")

_CSS = """
:root { --fail:#c62828; --fail-bg:#fdecea; --error:#e67700; --error-bg:#fff4e0; --skip:#6b6b6b;
  --skip-bg:#f3f3f3; --pass:#2e7d32; --pass-bg:#e8f5e9; --line:#dcdcdc; --ink:#1d1d1d; --muted:#666; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  background: #fafafa; }
header { padding: 18px 28px 14px; background: #fff; border-bottom: 1px solid var(--line); }
header.fail { border-top: 6px solid var(--fail); } header.error { border-top: 6px solid var(--error); }
header.pass { border-top: 6px solid var(--pass); }
h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }
h1 .site { color: var(--muted); font-weight: 400; }
h2 { font-size: 15px; margin: 22px 0 8px; }
.facts { color: var(--muted); margin: 0 0 10px; }
.badge { display: inline-block; padding: 3px 12px; margin-right: 6px; border-radius: 12px; font-weight: 600;
  color: #fff; }
.badge.zero { opacity: .35; }
.badge.fail { background: var(--fail); } .badge.error { background: var(--error); }
.badge.skip { background: var(--skip); } .badge.pass { background: var(--pass); }
main { padding: 8px 28px 28px; }
.notes { background: #fffbe6; border: 1px solid #f0dc8c; border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
.notes p { margin: 3px 0; white-space: pre-wrap; }
.filters { position: sticky; top: 0; z-index: 2; background: #fafafa; padding: 10px 0; display: flex; gap: 8px;
  align-items: center; flex-wrap: wrap; border-bottom: 1px solid var(--line); }
.filters button { font: inherit; padding: 4px 12px; border-radius: 14px; border: 2px solid var(--c);
  background: #fff; color: var(--c); cursor: pointer; font-weight: 600; }
.filters button.on { background: var(--c); color: #fff; }
.filters button[data-status=fail] { --c: var(--fail); } .filters button[data-status=error] { --c: var(--error); }
.filters button[data-status=skip] { --c: var(--skip); } .filters button[data-status=pass] { --c: var(--pass); }
.filters input { font: inherit; padding: 5px 10px; border: 1px solid #bbb; border-radius: 6px; min-width: 320px;
  margin-left: 8px; }
.filters .shown { color: var(--muted); margin-left: auto; }
table.results { border-collapse: collapse; width: 100%; background: #fff; margin-top: 10px;
  border: 1px solid var(--line); }
table.results th, table.results td { text-align: left; vertical-align: top; padding: 5px 8px;
  border-bottom: 1px solid #eee; }
table.results thead th { background: #f0f0f0; font-size: 12px; text-transform: uppercase; letter-spacing: .04em;
  color: #444; position: sticky; top: 52px; z-index: 1; }
tr.group th { background: #eceff3; font-size: 15px; border-top: 2px solid #c9ced6; padding: 7px 8px; }
tr.group .tally { font-weight: 400; color: var(--muted); margin-left: 10px; font-size: 13px; }
tr.group.fail th { box-shadow: inset 5px 0 var(--fail); } tr.group.error th { box-shadow: inset 5px 0 var(--error); }
tr.group.skip th { box-shadow: inset 5px 0 var(--skip); } tr.group.pass th { box-shadow: inset 5px 0 var(--pass); }
tr.r.fail td { background: var(--fail-bg); } tr.r.error td { background: var(--error-bg); }
tr.r.skip td { color: #555; }
tr.r.pass td { color: #444; }
td.check { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px;
  overflow-wrap: anywhere; min-width: 300px; }
td.fix { min-width: 380px; }
td.text { white-space: pre-wrap; overflow-wrap: anywhere; }
td.fix code { display: inline-block; white-space: pre-wrap; overflow-wrap: anywhere; background: #1f2933;
  color: #e8f0f8; padding: 2px 7px; border-radius: 4px; font-size: 12.5px; user-select: all; }
.st { display: inline-block; min-width: 52px; text-align: center; padding: 1px 6px; border-radius: 4px;
  font-weight: 700; font-size: 12px; color: #fff; }
.st.fail { background: var(--fail); } .st.error { background: var(--error); }
.st.skip { color: var(--skip); background: var(--skip-bg); box-shadow: inset 0 0 0 1px #c8c8c8; }
.st.pass { color: var(--pass); background: var(--pass-bg); box-shadow: inset 0 0 0 1px #b5d8b8; }
tr.r.pass td { padding-top: 3px; padding-bottom: 3px; }
.empty { color: var(--muted); padding: 14px; }
figure { display: inline-block; margin: 0 18px 18px 0; background: #fff; border: 1px solid var(--line);
  padding: 8px; border-radius: 6px; }
figure img { max-width: 100%; display: block; }
figcaption { color: var(--muted); font-size: 12px; margin-top: 4px; }
table.meta { border-collapse: collapse; font-size: 13px; background: #fff; }
table.meta th, table.meta td { border: 1px solid var(--line); padding: 3px 9px; text-align: left;
  vertical-align: top; }
table.meta td { white-space: pre-wrap; font-family: ui-monospace, Menlo, Consolas, monospace; }
footer { color: var(--muted); font-size: 12px; padding: 0 28px 20px; }
.badge.info, .st.info, .filters button[data-status=info] { --c: #1565c0; background: #1565c0; }
.filters button[data-status=info] { background: #fff; color: #1565c0; } .filters button.on[data-status=info] {
  background: #1565c0; color: #fff; }
tr.r.info td { color: #1d3a5f; }
section.problems article { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--fail);
  border-radius: 6px; padding: 8px 14px; margin: 10px 0; }
section.problems h3 { margin: 0 0 4px; font-size: 15px; }
section.problems .pid { color: var(--muted); font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
section.problems code.fix { background: #1f2933; color: #e8f0f8; padding: 2px 7px; border-radius: 4px; }
section.problems ul { margin: 6px 0 0; padding-left: 18px; }
h2 .tally, summary .tally { font-weight: 400; color: var(--muted); margin-left: 10px; font-size: 13px; }
table.matrix { border-collapse: collapse; background: #fff; font-size: 12px; margin: 4px 0 8px; }
table.matrix th { text-align: left; padding: 1px 8px 1px 2px; font-weight: 500; white-space: nowrap; }
table.matrix thead th { vertical-align: bottom; height: 90px; padding: 0; }
table.matrix thead th span { display: inline-block; writing-mode: vertical-rl; transform: rotate(180deg);
  white-space: nowrap; padding: 2px; color: #444; }
table.matrix td { width: 22px; height: 17px; border: 1px solid #fff; text-align: center; padding: 0; }
table.matrix td a { display: block; color: #fff; text-decoration: none; font-weight: 700; }
table.matrix td.f { background: var(--fail); } table.matrix td.e { background: var(--error); }
table.matrix td.s { background: #bdbdbd; } table.matrix td.i { background: #90caf9; }
table.matrix td.p { background: #81c784; } table.matrix th a { color: var(--ink); }
section.matrix details summary, section.skips summary { cursor: pointer; padding: 3px 0; }
section.skips details { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 2px 10px;
  margin: 4px 0; }
section.skips p.targets { margin: 4px 0 8px; color: #444; font-size: 13px; overflow-wrap: anywhere; }
.svgbox { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px; }
.svgbox svg { max-width: 100%; height: auto; }
svg .isl { stroke: #90a4ae; stroke-width: 1.2; } svg .sw rect { fill: #37474f; }
svg .sw text { fill: #fff; font-size: 12px; text-anchor: middle; } svg .sw.small text { font-size: 10px; }
svg text.port { font-size: 11px; }
figure.trend { margin: 0 12px 8px 0; padding: 4px 8px; } table.heat td { width: 34px; color: #fff; font-size: 11px; }
p.legend, p.drawn { color: var(--muted); margin: 2px 0 6px; font-size: 13px; }
"""

# Status buttons toggle statuses on and off; the text box keeps rows whose text (or target) holds it.
# A target whose rows are all hidden hides its heading too. ``report.html#q=dgx03`` opens pre-filtered
# (a link to one host's part of the report), ``#h=dgx03`` (``&c=network``) shows one host (one cell of
# the matrix). On a large report (row_store's script loaded first) the text box and the links draw rows.
_JS = """
(function () {
  var on = {fail: true, error: true, skip: true, info: true, pass: true}, only = null, lazy = !!window.racfgShow;
  var box = document.getElementById("q");
  var shown = document.getElementById("shown");
  function apply() {
    var q = lazy ? "" : box.value.trim().toLowerCase(), total = 0;
    document.querySelectorAll("tbody.target").forEach(function (tb) {
      var n = 0, target = (tb.getAttribute("data-target") || "").toLowerCase();
      var mine = lazy || !only || tb.getAttribute("data-host") === only.h;
      tb.querySelectorAll("tr.r").forEach(function (tr) {
        var ok = mine && on[tr.getAttribute("data-status")] &&
          (lazy || !only || !only.c || tr.children[2].textContent === only.c) &&
          (!q || target.indexOf(q) >= 0 || tr.textContent.toLowerCase().indexOf(q) >= 0);
        tr.hidden = !ok;
        if (ok) { n += 1; }
      });
      tb.hidden = n === 0;
      total += n;
    });
    shown.textContent = total + " shown";
  }
  window.racfgApply = apply;
  function route() {
    var h = location.hash, args = {};
    h.slice(1).split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) { args[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); }
    });
    only = args.h ? {h: args.h, c: args.c} : null;
    if (args.q !== undefined) { box.value = args.q; }
    if (lazy) {
      if (only) { window.racfgHost(only.h, only.c); } else { window.racfgText(box.value.trim()); }
    } else { apply(); }
    if (only) { document.querySelector("table.results").scrollIntoView(); }
  }
  document.querySelectorAll("button[data-status]").forEach(function (b) {
    b.addEventListener("click", function () {
      var s = b.getAttribute("data-status");
      on[s] = !on[s];
      b.classList.toggle("on", on[s]);
      b.setAttribute("aria-pressed", on[s] ? "true" : "false");
      apply();
    });
  });
  box.addEventListener(lazy ? "change" : "input", function () {
    only = null;
    if (lazy) { window.racfgText(box.value.trim()); } else { apply(); }
  });
  window.addEventListener("hashchange", route);
  route();
})();
"""


def render_html(report: Report) -> str:
    """The report as one self-contained HTML5 document."""
    counts = report.counts()
    groups = by_target(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title(report))}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        _header(report, counts),
        "<main>",
    ]
    if report.notes:
        parts.append('<section class="notes" aria-label="Notes">'
                     + "".join(f"<p>{_e(note)}</p>" for note in report.notes) + "</section>")
    views = problem_views(report)
    if views:
        parts.append(_problems(views))
    parts += [matrix_html(report), fabric_svg(report), heatmap_html(report.meta), trends_html(report.meta),
              _skips(report)]
    parts.append(_filters(counts))
    on_demand = len(report.results) > row_store.INLINE_ROWS
    parts.append(_empty_table(len(report.results)) if on_demand else _results_table(groups))
    if report.attachments:
        parts.append("<h2>Attachments</h2>")
        parts.append('<section class="attachments">' + "".join(_attachment(a) for a in report.attachments)
                     + "</section>")
    if report.meta:
        parts.append("<h2>Run facts</h2>")
        parts.append(_meta_table(report.meta))
    parts += ["</main>", f"<footer>{_e(report.summary_line())} · generated by racfg</footer>",
              f"<script>{_JS}</script>", "</body>", "</html>"]
    if on_demand:
        parts[-3:-2] = [f'<script type="application/json" id="rows">{row_store.packed_rows(report)}</script>',
                        f"<script>{row_store.JS}</script>", f"<script>{_JS}</script>"]
    return "\n".join(parts) + "\n"


def _e(value: object) -> str:
    return html.escape(clean(value), quote=True)


def _header(report: Report, counts: dict[str, int]) -> str:
    worst = next((s for s in (Status.FAIL, Status.ERROR) if counts[str(s)]), Status.PASS)
    badges = "".join(
        f'<span class="badge {s}{" zero" if not counts[str(s)] else ""}">{count_phrase(s, counts[str(s)])}</span>'
        for s in _shown(counts))
    return (f'<header class="{worst}">'
            f'<h1>racfg {_e(report.command)} <span class="site">site {_e(report.site)}</span></h1>'
            f'<p class="facts">started {_e(report.started)} · elapsed {report.elapsed:.1f} s · '
            f"{len(report.results)} checks · exit code {int(report.exit_code())}</p>"
            f'<div class="badges">{badges}</div></header>')


def _shown(counts: dict[str, int]) -> tuple[Status, ...]:
    """The statuses with a badge and a button: ``info`` only when the report recorded readings."""
    return tuple(s for s in _READING_ORDER if s is not Status.INFO or counts[str(s)])


def _filters(counts: dict[str, int]) -> str:
    buttons = "".join(
        f'<button type="button" class="on" data-status="{s}" aria-pressed="true">'
        f"{STATUS_LABEL[s].capitalize()} {counts[str(s)]}</button>" for s in _shown(counts))
    return (f'<nav class="filters" aria-label="Filters">{buttons}'
            '<input id="q" type="search" placeholder="Filter: host, check, text…" aria-label="Filter by text">'
            '<span id="shown" class="shown"></span></nav>')


def _results_table(groups: list[TargetGroup]) -> str:
    if not groups:
        return '<p class="empty">No results.</p>'
    head = "<thead><tr>" + "".join(f"<th>{c}</th>" for c in _COLUMNS) + "</tr></thead>"
    bodies = "".join(_target_body(g) for g in groups)
    return f'<table class="results">{head}{bodies}</table>'


def _empty_table(total: int) -> str:
    """The table of a large report: no rows yet; row_store's script draws them on demand."""
    head = "<thead><tr>" + "".join(f"<th>{c}</th>" for c in _COLUMNS) + "</tr></thead>"
    return (f'<p class="drawn">{total} results, drawn on demand: a host or a cell in the matrix, or the filter box '
            f'(Enter). <span id="drawn"></span></p><table class="results">{head}</table>')


def _skips(report: Report) -> str:
    """Skips grouped by reason (as the terminal prints them), each reason's targets folded under it."""
    groups = skip_groups(report.results)
    if not groups:
        return ""
    items = "".join(f'<details class="skip"><summary><span class="st skip">SKIP</span> {_e(g.reason)} '
                    f'<span class="tally">{g.count} check{"" if g.count == 1 else "s"}, {len(g.targets)} target'
                    f'{"" if len(g.targets) == 1 else "s"}</span></summary><p class="targets">'
                    f'{_e(", ".join(g.targets))}</p></details>' for g in groups)
    return (f'<section class="skips" aria-label="Skips by reason"><h2>Skipped, by reason '
            f'<span class="tally">{sum(g.count for g in groups)} checks</span></h2>{items}</section>')


def _target_body(group: TargetGroup) -> str:
    rows = "".join(_row(r) for r in group.results)
    return (f'<tbody class="target" data-target="{_e(group.target)}" data-host="{_e(host_of(group.target))}">'
            f'<tr class="group {group.worst()}"><th colspan="{len(_COLUMNS)}">{_e(group.target)}'
            f'<span class="tally">{_e(group.tally())}</span></th></tr>{rows}</tbody>')


_PROBLEMS_OPEN, _RESULTS_OPEN = 5, 4  # shown at once; the rest folded, so the matrix stays near the top


def _problems(views: list[ProblemView]) -> str:
    shown = "".join(_problem(v) for v in views[:_PROBLEMS_OPEN])
    rest = views[_PROBLEMS_OPEN:]
    folded = (f"<details><summary>{len(rest)} more problem{'' if len(rest) == 1 else 's'}</summary>"
              + "".join(_problem(v) for v in rest) + "</details>") if rest else ""
    return (f'<section class="problems" aria-label="Problems"><h2>{len(views)} problem'
            f'{"" if len(views) == 1 else "s"}</h2>{shown}{folded}</section>')


def _problem(view: ProblemView) -> str:
    fix = f'<p>fix: <code class="fix">{_e(view.problem.fix)}</code></p>' if view.problem.fix else ""
    items = [f'<li><span class="st {r.status}">{STATUS_LABEL[r.status]}</span> <code>{_e(r.check)}</code> '
             f"{_e(headline(r))}</li>" for r in view.results]
    listed = "".join(items[:_RESULTS_OPEN])
    if len(items) > _RESULTS_OPEN:
        listed += (f"<li><details><summary>{len(items) - _RESULTS_OPEN} more</summary><ul>"
                   + "".join(items[_RESULTS_OPEN:]) + "</ul></details></li>")
    return (f'<article class="problem" data-problem="{_e(view.problem.id)}"><h3>{_e(view.problem.cause)}</h3>'
            f'<p class="pid">{_e(view.problem.id)}</p>{fix}<ul>{listed}</ul></article>')


def _row(result: Result) -> str:
    status = str(result.status)
    fix = f"<code>{_e(result.fix)}</code>" if result.fix else ""
    cause = f' data-cause="{_e(result.cause)}"' if result.cause else ""
    return (f'<tr class="r {status}" data-status="{status}"{cause}>'
            f'<td><span class="st {status}">{STATUS_LABEL[result.status]}</span></td>'
            f'<td class="check">{_e(result.check)}</td>'
            f"<td>{_e(result.category)}</td>"
            f'<td class="text">{_e(result.expected or "")}</td>'
            f'<td class="text">{_e(result.actual or "")}</td>'
            f'<td class="text">{_e(result.message)}</td>'
            f'<td class="fix">{fix}</td></tr>')


def _attachment(path_text: str) -> str:
    """An image embedded as a data URI, captioned with its file name; a missing file says so instead."""
    path = Path(path_text)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"<figure><figcaption>{_e(path.name)}: not embedded ({_e(exc.strerror or exc)})</figcaption></figure>"
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    encoded = base64.b64encode(data).decode("ascii")
    return (f'<figure><img src="data:{mime};base64,{encoded}" alt="{_e(path.name)}">'
            f"<figcaption>{_e(path.name)}</figcaption></figure>")


_DRAWN_META = ("fabric", "peer_heatmap", "trends")  # meta the report draws rather than lists


def _meta_table(meta: dict[str, object]) -> str:
    rows = "".join(f"<tr><th>{_e(key)}</th><td>{_e(_meta_value(value))}</td></tr>" for key, value in meta.items()
                   if key not in _DRAWN_META)
    return f'<table class="meta">{rows}</table>'


def _meta_value(value: object) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)

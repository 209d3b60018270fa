"""The HTML report's inline stylesheet and script (no network: nothing else is loaded)."""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
:root { --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; --dim: #6e7781; --line: #d0d7de;
  --pass-bg: #dafbe1; --fail-bg: #ffebe9; --warn-bg: #fff8c5; --grey-bg: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  max-width: 1280px; padding: 16px 24px; color: #1f2328; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h4 { margin: 12px 0 6px; } h5 { margin: 8px 0 4px; font-size: 13px; color: var(--dim); }
code, pre, .trajectory td, .reply { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size: 12.5px; }
pre { background: var(--grey-bg); padding: 8px; overflow-x: auto; white-space: pre-wrap;
  word-break: break-word; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--grey-bg); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; }
.table-scroll { max-width: 100%; overflow-x: auto; margin: 8px 0; }
.table-scroll > table { margin: 0; }
table.summary td { overflow-wrap: break-word; }
table.summary .badge { white-space: nowrap; }
table.summary td.num .dim { display: block; white-space: normal; }
h2, .case-id { overflow-wrap: anywhere; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
.dim, .path { color: var(--dim); font-weight: normal; }
.path { font-size: 13px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
  font-weight: 700; color: #fff; background: var(--dim); vertical-align: middle; }
.badge.passed { background: var(--pass); } .badge.failed { background: var(--fail); }
.badge.not-evaluated { background: var(--warn); }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 6px;
  padding: 0 6px; margin: 1px 2px; font-size: 12px; white-space: nowrap; }
.chip.passed { background: var(--pass-bg); } .chip.failed { background: var(--fail-bg);
  border-color: var(--fail); } .chip.not-evaluated { background: var(--warn-bg); }
details.case { border: 1px solid var(--line); border-left: 5px solid var(--dim);
  border-radius: 6px; margin: 10px 0; padding: 6px 12px; }
details.case.passed { border-left-color: var(--pass); }
details.case.failed { border-left-color: var(--fail); }
details.case > summary { cursor: pointer; font-size: 15px; padding: 4px 0; }
.case-id { font-weight: 600; font-family: ui-monospace, monospace; }
.reasons li { color: var(--fail); }
.divergence { background: var(--fail-bg); border: 1px solid var(--fail); border-radius: 6px;
  padding: 4px 12px; margin: 8px 0; }
.divergence code { white-space: pre-wrap; word-break: break-word; }
.invocation { border-top: 1px dashed var(--line); margin-top: 10px; }
blockquote.user { margin: 6px 0; padding: 6px 10px; background: var(--grey-bg);
  border-left: 3px solid var(--dim); white-space: pre-wrap; }
.trajectory td { width: 42%; } .trajectory td.why { width: 16%; font-family: inherit; }
tr.call.match td { background: #f6fff8; }
tr.call.differs td { background: var(--warn-bg); }
tr.call.missing td, tr.call.extra td { background: var(--fail-bg); }
tr.call.allowed td { background: var(--grey-bg); color: var(--dim); }
tr.call.missing td.why, tr.call.extra td.why, tr.call.differs td.why { color: var(--fail);
  font-weight: 600; }
.fn { font-weight: 700; }
.arg.changed { background: #ffcecb; outline: 1px solid var(--fail); border-radius: 3px; }
.arg.changed .key { text-decoration: underline wavy var(--fail); }
.replies { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.reply { white-space: pre-wrap; background: var(--grey-bg); padding: 6px 8px; margin: 0;
  word-break: break-word; min-height: 2em; }
del { background: #ffcecb; text-decoration: line-through; }
ins { background: #abf2bc; text-decoration: none; }
details.responses { margin: 8px 0; } details.responses > summary { cursor: pointer;
  color: var(--dim); }
details.tool-response > summary { cursor: pointer; font-family: ui-monospace, monospace; }
tr.case-row.failed td:first-child { border-left: 4px solid var(--fail); }
.controls button { font: inherit; }
body.only-failed details.case.passed, body.only-failed tr.case-row.passed { display: none; }
@media (max-width: 800px) { .replies { grid-template-columns: 1fr; } }
"""

SCRIPT = """
(function () {
  "use strict";
  var body = document.body;
  var cases = Array.prototype.slice.call(document.querySelectorAll("details.case"));
  var only = document.getElementById("only-failed");
  only.addEventListener("change", function () {
    body.classList.toggle("only-failed", only.checked);
  });
  document.getElementById("expand-all").addEventListener("click", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    cases.forEach(function (d) { d.open = false; });
  });
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"""

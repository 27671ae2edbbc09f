/** The one stylesheet of the server's pages (sign-in, consent, the owners' console): plain, readable, no web fonts. */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d1d1f; --muted: #5f6368; --bg: #ffffff; --panel: #f6f7f9; --line: #d9dce1; --accent: #2454d6; --danger: #b3261e; --warn-bg: #fff4ce; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a5abb3; --bg: #16181c; --panel: #1f2227; --line: #363a41; --accent: #8ab4f8; --danger: #f28b82; --warn-bg: #3d3413; } }
* { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0; }
header.site { border-bottom: 1px solid var(--line); padding: .75rem 1.25rem; display: flex; gap: 1rem; align-items: center; justify-content: space-between; flex-wrap: wrap; }
header.site .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header.site .who { color: var(--muted); font-size: .9rem; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1.25rem; }
main.wide { max-width: 72rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 1rem; }
main h1 { overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
p { margin: .5rem 0 1rem; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
.notice { border-left: 4px solid var(--accent); padding: .5rem 1rem; background: var(--panel); margin: 1rem 0; }
.error { border-left: 4px solid var(--danger); padding: .5rem 1rem; background: var(--panel); margin: 1rem 0; }
.warning { background: var(--warn-bg); border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0; }
.badge { display: inline-block; font-size: .75rem; padding: 0 .4rem; border: 1px solid var(--line); border-radius: 999px; color: var(--muted); vertical-align: middle; }
form { margin: 0; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; }
legend { font-weight: 600; padding: 0 .25rem; }
label { display: block; margin: .35rem 0; }
label.inline { display: inline-flex; gap: .5rem; align-items: center; }
input[type=text], input[type=email], input[type=url], input[type=password], select { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .45rem .6rem; }
input[type=text], input[type=email], input[type=url], input[type=password] { width: 100%; }
button, .button { font: inherit; border-radius: 6px; padding: .5rem 1rem; border: 1px solid var(--accent); background: var(--accent); color: var(--bg); cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.25rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
ul.choices { list-style: none; padding: 0; margin: 0; }
ul.choices li { display: flex; gap: .75rem; align-items: center; justify-content: space-between; flex-wrap: wrap; padding: .35rem 0; border-bottom: 1px solid var(--line); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; overflow-wrap: anywhere; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
nav.console { border-bottom: 1px solid var(--line); padding: 0 1.25rem; display: flex; gap: .25rem 1.25rem; flex-wrap: wrap; }
nav.console a { display: inline-block; padding: .6rem 0; text-decoration: none; border-bottom: 3px solid transparent; }
nav.console a[aria-current=page] { border-bottom-color: var(--accent); color: var(--fg); font-weight: 600; }
nav.console .account { color: var(--muted); padding: .6rem 0; margin-right: auto; }
nav.console form { align-self: center; padding: .35rem 0; }
@media (max-width: 40rem) { nav.console .account { flex-basis: 100%; padding-bottom: 0; } }
th { white-space: nowrap; }
.table-scroll { overflow-x: auto; margin: .5rem 0 1rem; }
.table-scroll table { min-width: 36rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .75rem; margin: .5rem 0 1rem; }
dl.stats div { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; }
dl.stats dt { color: var(--muted); font-size: .85rem; }
dl.stats dd { margin: 0; font-size: 1.35rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.secret { display: block; padding: .6rem .75rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; white-space: pre-wrap; word-break: break-all; }
.checks { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
ul.plain { list-style: none; padding: 0; margin: 0; }
button.small { padding: .2rem .6rem; font-size: .9rem; }
textarea { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .45rem .6rem; width: 100%; }
ol.versions { list-style: none; padding: 0; margin: .5rem 0 1rem; } ol.versions li { border-bottom: 1px solid var(--line); padding: .5rem 0; } ol.versions summary { cursor: pointer; } ol.versions .changed { color: var(--muted); }
dl.answers { margin: .5rem 0 0; } dl.answers dt { color: var(--muted); font-size: .85rem; } dl.answers dd { margin: 0 0 .35rem; overflow-wrap: anywhere; }
/* Activity: the chart's and the log's outcome colours (SVG fill, HTML swatches), filters, entry details. */
:root { --o-ok: #2e7d32; --o-tool_error: #e65100; --o-setup_required: #6a1b9a; --o-invalid: #b08900; --o-denied: #c62828; --o-rate_limited: #546e7a; }
@media (prefers-color-scheme: dark) { :root { --o-ok: #81c784; --o-tool_error: #ffb74d; --o-setup_required: #ce93d8; --o-invalid: #fff176; --o-denied: #ef9a9a; --o-rate_limited: #b0bec5; } }
.swatch { display: inline-block; width: .75rem; height: .75rem; border-radius: 2px; margin-right: .35rem; vertical-align: -.05rem; background: var(--muted); }
.o-ok { fill: var(--o-ok); background: var(--o-ok); }
.o-tool_error { fill: var(--o-tool_error); background: var(--o-tool_error); }
.o-setup_required { fill: var(--o-setup_required); background: var(--o-setup_required); }
.o-invalid { fill: var(--o-invalid); background: var(--o-invalid); }
.o-denied { fill: var(--o-denied); background: var(--o-denied); }
.o-rate_limited { fill: var(--o-rate_limited); background: var(--o-rate_limited); }
.outcome { white-space: nowrap; }
figure.chart { margin: .5rem 0 1rem; }
/* On a phone the chart scrolls sideways; right-to-left, so it opens on the newest hours. */
.chart-scroll { overflow-x: auto; direction: rtl; }
svg.chart { direction: ltr; display: block; width: 100%; min-width: 34rem; height: auto; }
svg.chart text { font-size: 11px; fill: var(--muted); font-variant-numeric: tabular-nums; }
svg.chart .x-label { text-anchor: middle; }
svg.chart .y-label { text-anchor: end; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .bar:hover { opacity: .8; }
ul.legend { list-style: none; padding: 0; margin: .25rem 0 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .9rem; }
details.chart-data { margin: 0 0 1rem; }
details.chart-data summary { cursor: pointer; color: var(--accent); }
.chart-span { margin: 0 0 .25rem; }
form.filters h2 { margin-top: 0; }
form.filters .fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: .25rem 1rem; }
form.filters select, form.filters input { width: 100%; }
input[type=datetime-local] { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem; }
.log-head { display: flex; align-items: baseline; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
a.button.small { padding: .2rem .6rem; font-size: .9rem; }
table.log td { white-space: nowrap; }
nav.pager { display: flex; gap: 1.5rem; margin: .5rem 0 1.5rem; }
/* Audit: cells wrap (targets and changes are key: value lines); on a phone each event is a block of labelled lines. */
table.audit { margin: .5rem 0 1rem; }
table.audit td { vertical-align: top; overflow-wrap: anywhere; }
table.audit td[data-label=Time], table.audit td[data-label=Action] { white-space: nowrap; }
table.audit td[data-label=Who] { overflow-wrap: normal; }
table.audit .badge { white-space: nowrap; }
ul.pairs { list-style: none; padding: 0; margin: 0; }
ul.pairs ul.pairs { padding-left: 1rem; }
ul.pairs .key { color: var(--muted); }
@media (max-width: 40rem) {
  table.audit thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.audit, table.audit tbody, table.audit tr, table.audit td { display: block; }
  table.audit tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.audit td { border: 0; padding: .1rem 0; }
  table.audit td::before { content: attr(data-label) ": "; color: var(--muted); }
}
dl.details { display: grid; grid-template-columns: minmax(7rem, max-content) 1fr; gap: .35rem 1.25rem; margin: 1rem 0; }
dl.details div { display: contents; }
dl.details dt { color: var(--muted); }
dl.details dd { margin: 0; overflow-wrap: anywhere; }
/* Identity provider: an issuer is a long URL; each provider's change form folds away. */
h2.issuer { overflow-wrap: anywhere; }
dl.provider { grid-template-columns: minmax(7rem, 14rem) 1fr; }
@media (max-width: 40rem) { dl.provider { grid-template-columns: 1fr; gap: 0; } dl.provider dd { margin-bottom: .6rem; } }
form select { max-width: 100%; }
details.change { margin: .5rem 0 1rem; } details.change summary { cursor: pointer; color: var(--accent); }
`;

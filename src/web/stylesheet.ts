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
input[type=text], input[type=email], select { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .45rem .6rem; }
input[type=text], input[type=email] { width: 100%; }
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
`;

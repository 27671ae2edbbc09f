/**
 * The console's one script, served at /assets/console.js (CSP `default-src 'self'`: no inline
 * script). Progressive enhancement only: every page works without it.
 * - `<time datetime>` elements show their moment in the browser's time zone (the server writes UTC).
 * - `<button data-copy="<element id>">` (hidden until this runs) copies that element's text.
 * - In the Activity chart's SVG (no <time> there), `data-at` labels show their hour in the browser's
 *   zone, and a bar's `<title data-at data-what>` says "<what> · <day and hour>".
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  function localTimes() {
    document.querySelectorAll('time[datetime]').forEach(function (el) {
      var at = new Date(el.getAttribute('datetime'));
      if (isNaN(at.getTime())) return;
      el.textContent = format.format(at);
      el.title = at.toISOString();
    });
  }
  function copyButtons() {
    document.querySelectorAll('button[data-copy]').forEach(function (button) {
      var source = document.getElementById(button.getAttribute('data-copy'));
      if (!source || !navigator.clipboard) return;
      var label = button.textContent;
      button.hidden = false;
      button.addEventListener('click', function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          button.textContent = 'Copied';
          setTimeout(function () { button.textContent = label; }, 2000);
        }, function () {
          button.textContent = 'Copy failed: select the text';
        });
      });
    });
  }
  var hour = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  var dayHour = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  function chartTimes() {
    document.querySelectorAll('svg [data-at]').forEach(function (el) {
      var at = new Date(el.getAttribute('data-at'));
      if (isNaN(at.getTime())) return;
      var what = el.getAttribute('data-what');
      el.textContent = what ? what + ' \\u00b7 ' + dayHour.format(at) : hour.format(at);
    });
  }
  function ready() { localTimes(); copyButtons(); chartTimes(); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
})();
`;

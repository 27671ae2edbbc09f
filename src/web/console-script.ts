/**
 * The console's one script, served at /assets/console.js (CSP `default-src 'self'`: no inline
 * script). Progressive enhancement only: every page works without it.
 * - `<time datetime>` elements show their moment in the browser's time zone (the server writes UTC).
 * - `<button data-copy="<element id>">` (hidden until this runs) copies that element's text.
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
  function ready() { localTimes(); copyButtons(); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
})();
`;

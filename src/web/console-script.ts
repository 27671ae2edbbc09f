/**
 * The console's one script, served at /assets/console.js (CSP `default-src 'self'`: no inline
 * script). Progressive enhancement only: every page works without it.
 * - `<time datetime>` elements show their moment in the browser's time zone (the server writes UTC).
 * - `<button data-copy="<element id>">` (hidden until this runs) copies that element's text.
 * - In the Activity chart's SVG (no <time> there), `data-at` labels show their hour in the browser's
 *   zone, and a bar's `<title data-at data-what>` says "<what> · <day and hour>".
 * - `<input type="datetime-local" data-utc>` fields (the Activity filters' From and To, UTC as the
 *   server writes them) show their time in the browser's zone, their label's `<span data-zone>` names
 *   that zone, and the form sends them as ISO 8601 with the browser's offset (the form's `formdata`
 *   event), so the server reads the exact moment. A browser without that event keeps them UTC.
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
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  /** A moment as datetime-local's text in the browser's zone (seconds only when there are some). */
  function fieldText(at) {
    return at.getFullYear() + '-' + pad(at.getMonth() + 1) + '-' + pad(at.getDate()) + 'T' + pad(at.getHours()) + ':' + pad(at.getMinutes()) +
      (at.getSeconds() ? ':' + pad(at.getSeconds()) : '');
  }
  /** A field's local time (no offset: the browser's zone) as ISO 8601 with that zone's offset then. */
  function withOffset(text) {
    var at = new Date(text);
    if (isNaN(at.getTime())) return text;
    var minutes = -at.getTimezoneOffset();
    var sign = minutes < 0 ? '-' : '+';
    minutes = Math.abs(minutes);
    return fieldText(at) + sign + pad(Math.floor(minutes / 60)) + ':' + pad(minutes % 60);
  }
  function localFields() {
    if (typeof FormDataEvent === 'undefined') return;
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    document.querySelectorAll('form').forEach(function (form) {
      var fields = form.querySelectorAll('input[type="datetime-local"][data-utc][name]');
      if (!fields.length) return;
      fields.forEach(function (field) {
        // Only the server's value: a value the browser restored (back button) is already local.
        if (field.value && field.value === field.defaultValue && /^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?$/.test(field.value)) {
          var at = new Date(field.value + 'Z');
          if (!isNaN(at.getTime())) field.value = fieldText(at);
        }
        var label = field.id && form.querySelector('label[for="' + field.id + '"] [data-zone]');
        if (label) label.textContent = zone ? '(' + zone + ')' : '(your time zone)';
      });
      form.addEventListener('formdata', function (event) {
        fields.forEach(function (field) {
          if (field.value) event.formData.set(field.name, withOffset(field.value));
        });
      });
    });
  }
  function ready() { localTimes(); copyButtons(); chartTimes(); localFields(); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
})();
`;

import { escapeHtml, html } from './html.js';

describe('html', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `<script>alert("x")</script>' & \``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;</p>',
    );
  });

  it('keeps nested fragments, joins arrays, drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((i) => html`<li>${i}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
  });

  it('escapes a plain string that looks like markup', () => {
    expect(escapeHtml('<b>')).toBe('&lt;b&gt;');
  });
});

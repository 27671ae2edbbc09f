import { Controller, Get, Module, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { html, Html } from '../../src/web/html.js';
import { contentSecurityPolicy, sendPage } from '../../src/web/page.js';
import { describeWithChromium, keepScreenshot, launchChromium, startCallbackServer, type CallbackServer } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The page layout's security headers (docs/oauth.md#what-every-oauth-endpoint-shares) as Chromium applies them: pages
// rendered by sendPage through a test-only module, so this holds before any real page exists.

/** Test-only pages: one with an inline script and an inline style, one whose form's POST redirects. */
@Controller('test-only/pages')
class FixturePagesController {
  @Get('script')
  script(@Res() res: Response): void {
    const script = new Html(`<script>document.title = 'script ran'; document.body.insertAdjacentHTML('beforeend', '<p id="ran">ran</p>');</script>`);
    sendPage(res, { title: 'Inline script', body: html`<h1>Inline script</h1>${script}<p id="inline" style="color: rgb(255, 0, 0)">Inline style</p>` });
  }

  /** A form posting to /redirect, which answers 302 to `to`; `allow=1` names `to`'s origin in form-action. */
  @Get('form')
  form(@Query('to') to: string, @Query('allow') allow: string, @Res() res: Response): void {
    sendPage(res, {
      title: 'Form',
      body: html`<form method="post" action="/test-only/pages/redirect?to=${encodeURIComponent(to)}"><button type="submit">Send</button></form>`,
      formAction: allow === '1' ? [new URL(to).origin] : [],
    });
  }

  @Post('redirect')
  redirect(@Query('to') to: string, @Res() res: Response): void {
    res.redirect(302, to);
  }
}

@Module({ controllers: [FixturePagesController] })
class FixturePagesModule {}

/** Resolves with the first console message of `page` that contains `text`. */
function consoleMessage(page: Page, text: string): Promise<ConsoleMessage> {
  return page.waitForEvent('console', { predicate: (m) => m.text().includes(text), timeout: 15_000 });
}

/** In the page: the computed value of a CSS property of an element (the tests' lib has no DOM types). */
const computed = (el: any, property: string): string => el.ownerDocument.defaultView.getComputedStyle(el)[property];

describeWithChromium('page security headers in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let callback: CallbackServer;

  beforeAll(async () => {
    browser = await launchChromium();
    callback = await startCallbackServer();
    t = await startTestApp({}, [FixturePagesModule]);
    context = await browser.newContext();
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await callback?.close();
    await t?.close();
  });

  it('runs no inline script and applies no inline style, but applies the stylesheet', async () => {
    const page = await context.newPage();
    const blocked = consoleMessage(page, 'Executing inline script violates');
    const res = await page.goto(`${t.baseUrl}/test-only/pages/script`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toBe(contentSecurityPolicy());
    expect(res!.headers()['x-frame-options']).toBe('DENY');
    await blocked;
    expect(await page.title()).toBe('Inline script · Reblog');
    expect(await page.locator('#ran').count()).toBe(0);
    // Playwright's evaluate goes through DevTools, which CSP does not govern.
    expect(await page.locator('#inline').evaluate(computed, 'color')).not.toBe('rgb(255, 0, 0)');
    expect(await page.locator('header.site').evaluate(computed, 'borderBottomStyle')).toBe('solid');
    await keepScreenshot(page, 'page-layout');
    await page.close();
  });

  it("lets a form's redirect reach the origin named in form-action, and stops it otherwise", async () => {
    const page = await context.newPage();
    const allowed = `${callback.origin}/callback?code=allowed`;
    await page.goto(`${t.baseUrl}/test-only/pages/form?allow=1&to=${encodeURIComponent(allowed)}`);
    await Promise.all([page.waitForURL(allowed), page.getByRole('button', { name: 'Send' }).click()]);
    expect((await callback.next('/callback')).searchParams.get('code')).toBe('allowed');

    // The same form without the redirect's origin in form-action: Chrome applies the directive to the
    // redirect after the POST, so the request never leaves the browser.
    const stopped = `${callback.origin}/callback?code=stopped`;
    const res = await page.goto(`${t.baseUrl}/test-only/pages/form?allow=0&to=${encodeURIComponent(stopped)}`);
    expect(res!.headers()['content-security-policy']).toContain(`form-action 'self';`);
    const violation = consoleMessage(page, `violates the following Content Security Policy directive: "form-action 'self'"`);
    await page.getByRole('button', { name: 'Send' }).click();
    await violation;
    expect(callback.hits.map((h) => h.searchParams.get('code'))).toEqual(['allowed']);
    await page.close();
  });

  it('cannot be framed (frame-ancestors none)', async () => {
    const page = await context.newPage();
    const refused = consoleMessage(page, `frame-ancestors 'none'`);
    await page.setContent(`<iframe src="${t.baseUrl}/test-only/pages/script"></iframe>`);
    await refused;
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame!.url()).toMatch(/^chrome-error:/);
    expect(await frame!.locator('header.site').count()).toBe(0);
    await page.close();
  });
});

import type { Page } from 'playwright-core';
import { admin } from './fixtures.js';
import type { TestApp } from './test-app.js';

/** A signed-in browser session, as {@link signedIn} in people.ts makes one: its cookie and its csrf token. */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

/**
 * The console over HTTP as a browser without JavaScript uses it, on the app `app()` answers (a getter,
 * so the helpers can be made before `beforeAll` starts it): GETs and form posts that never follow a
 * redirect, with the session's cookie when given. A post's array field repeats its name (checkboxes);
 * `headers` set more (Origin, Sec-Fetch-Site) for the cross-site tests.
 */
export function consoleHttp(app: () => TestApp) {
  const get = (path: string, s?: ConsoleSession) => {
    const req = app().http.get(path).redirects(0);
    return s ? req.set('Cookie', s.cookie) : req;
  };
  const post = (path: string, s: ConsoleSession | undefined, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const value of Array.isArray(v) ? v : [v]) body.append(k, value);
    const req = app().http.post(path).type('form').redirects(0);
    if (s) req.set('Cookie', s.cookie);
    for (const [k, v] of Object.entries(headers)) req.set(k, v);
    return req.send(body.toString());
  };
  return { get, post };
}

/** Signs `userId` in on `page` as a person does: opens a fresh sign-in link, presses Sign in, lands on `accountId`'s overview. */
export async function signInOnPage(page: Page, app: TestApp, userId: string, accountId: string): Promise<void> {
  const link = await admin(app, 'post', `/admin/v1/users/${userId}/login-links`, {}, 201);
  await page.goto(link.url);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`**/console/accounts/${accountId}`);
}

import { hashSecret } from '../../src/auth/secrets.js';
import { OAuthPurgeService } from '../../src/oauth/oauth-purge.service.js';
import { withClient } from '../support/database.js';
import { admin } from '../support/fixtures.js';
import { newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The periodic purge also removes expired browser sessions and login links expired for a day.
describe('purge of sign-in rows', () => {
  let t: TestApp;
  const sql = (text: string, params: unknown[] = []) => withClient(t.config.databaseUrl!, async (c) => (await c.query(text, params)).rows);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('deletes expired browser sessions and links expired for a day; keeps live ones and a link expired an hour ago', async () => {
    const user = await newUser(t);
    const [expired, live] = [await signedIn(t, user.id), await signedIn(t, user.id)];
    const hashOf = (cookie: string) => hashSecret(cookie.slice(cookie.indexOf('=') + 1));
    await sql(`UPDATE browser_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1`, [hashOf(expired.cookie)]);
    const links = [];
    for (let i = 0; i < 3; i++) links.push(await admin(t, 'post', `/admin/v1/users/${user.id}/login-links`, {}, 201));
    await sql(`UPDATE login_links SET expires_at = now() - interval '25 hours' WHERE token_hash = $1`, [hashSecret(links[0].token)]);
    await sql(`UPDATE login_links SET expires_at = now() - interval '1 hour' WHERE token_hash = $1`, [hashSecret(links[1].token)]);

    // Counts only bound the answer from below: other suites share the database.
    const purged = await t.app.get(OAuthPurgeService).purge();
    expect(purged.browserSessions).toBeGreaterThanOrEqual(1);
    expect(purged.loginLinks).toBeGreaterThanOrEqual(1);
    const sessions = await sql(`SELECT id_hash FROM browser_sessions WHERE user_id = $1`, [user.id]);
    expect(sessions).toEqual([{ id_hash: hashOf(live.cookie) }]);
    const left = await sql(`SELECT token_hash FROM login_links WHERE user_id = $1`, [user.id]);
    expect(left.map((r) => r.token_hash).sort(Buffer.compare)).toEqual([hashSecret(links[1].token), hashSecret(links[2].token)].sort(Buffer.compare));
  });
});

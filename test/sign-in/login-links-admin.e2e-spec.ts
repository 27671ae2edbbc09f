import { createHash } from 'node:crypto';
import { ISO, MISSING_ID } from '../support/fixtures.js';
import { newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { sqlOn } from './sign-in-helpers.js';

const TOKEN = /^rbl_[A-Za-z0-9_-]{43}$/;

describe('POST /admin/v1/users/:user_id/login-links', () => {
  let t: TestApp;
  let person: TestUser;
  const post = (userId: string, body: unknown, token = t.adminToken) =>
    t.http
      .post(`/admin/v1/users/${userId}/login-links`)
      .set('Authorization', `Bearer ${token}`)
      .send(body as object);

  beforeAll(async () => {
    t = await startTestApp();
    person = await newUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 201 {url, token, expires_at}: a random rbl_ token, 900 s by default, the url on PUBLIC_URL', async () => {
    const before = Date.now();
    const res = await post(person.id, {});
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'token', 'url']);
    expect(res.body.token).toMatch(TOKEN);
    expect(res.body.expires_at).toMatch(ISO);
    const ttl = (new Date(res.body.expires_at).getTime() - before) / 1000;
    expect(ttl).toBeGreaterThan(895);
    expect(ttl).toBeLessThan(905);
    expect(res.body.url).toBe(`${t.config.publicUrl}/oauth/login?token=${res.body.token}`);
    const again = await post(person.id, {});
    expect(again.body.token).not.toBe(res.body.token);
  });

  it('stores only the hash of the token', async () => {
    const { body } = await post(person.id, {});
    const { rows } = await sqlOn(t, `SELECT token_hash, user_id, used_at FROM login_links WHERE token_hash = $1`, [
      createHash('sha256').update(body.token).digest(),
    ]);
    expect(rows).toEqual([{ token_hash: expect.any(Buffer), user_id: person.id, used_at: null }]);
    const { rows: plain } = await sqlOn(t, `SELECT count(*)::int AS n FROM login_links WHERE position($1::bytea in token_hash) > 0 OR return_to = $2`, [
      Buffer.from(body.token),
      body.token,
    ]);
    expect(plain[0].n).toBe(0);
  });

  it('takes expires_in and a return_to path, which the url carries', async () => {
    const before = Date.now();
    const res = await post(person.id, { expires_in: 3600, return_to: '/oauth/authorize?client_id=a&state=x y' });
    expect(res.status).toBe(201);
    const ttl = (new Date(res.body.expires_at).getTime() - before) / 1000;
    expect(ttl).toBeGreaterThan(3595);
    expect(ttl).toBeLessThan(3605);
    const url = new URL(res.body.url);
    expect(url.origin + url.pathname).toBe(`${t.config.publicUrl}/oauth/login`);
    expect(url.searchParams.get('token')).toBe(res.body.token);
    expect(url.searchParams.get('return_to')).toBe('/oauth/authorize?client_id=a&state=x%20y');
  });

  it('answers 422 for a disabled user, and makes no link', async () => {
    const disabled = await newUser(t);
    await sqlOn(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, [disabled.id]);
    const res = await post(disabled.id, {});
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('unprocessable');
    expect(res.body.error.message).toMatch(/disabled/);
    const { rows } = await sqlOn(t, `SELECT count(*)::int AS n FROM login_links WHERE user_id = $1`, [disabled.id]);
    expect(rows[0].n).toBe(0);
  });

  it('answers 404 for an unknown user and 400 for an id that is not a UUID', async () => {
    const unknown = await post(MISSING_ID, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const malformed = await post('not-a-uuid', {});
    expect(malformed.status).toBe(400);
  });

  it.each([
    ['expires_in as a string', { expires_in: '900' }, 'expires_in'],
    ['expires_in below 60', { expires_in: 59 }, 'expires_in'],
    ['expires_in above 7 days', { expires_in: 7 * 86_400 + 1 }, 'expires_in'],
    ['expires_in not whole', { expires_in: 90.5 }, 'expires_in'],
    ['return_to as a number', { return_to: 5 }, 'return_to'],
    ['return_to an absolute URL', { return_to: 'https://evil.test/' }, 'return_to'],
    ['return_to //host', { return_to: '//evil.test/x' }, 'return_to'],
    ['return_to /\\host', { return_to: '/\\evil.test/x' }, 'return_to'],
    ['return_to a relative path', { return_to: 'console/' }, 'return_to'],
    ['return_to javascript:', { return_to: 'javascript:alert(1)' }, 'return_to'],
    ['return_to with a tab', { return_to: '/\t/evil.test' }, 'return_to'],
    ['an unknown field', { scope: 'all' }, 'scope'],
  ])('answers 400 for %s', async (_case, body, name) => {
    const res = await post(person.id, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect((res.body.error.details as string[]).some((d) => d.includes(name))).toBe(true);
  });

  it('answers 401 without the admin token', async () => {
    const res = await post(person.id, {}, 'wrong-token-wrong-token');
    expect(res.status).toBe(401);
    const none = await t.http.post(`/admin/v1/users/${person.id}/login-links`).send({});
    expect(none.status).toBe(401);
  });
});

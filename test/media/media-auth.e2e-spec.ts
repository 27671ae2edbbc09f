import type { Response } from 'supertest';
import { createDatabase, type TestDatabase } from '../support/database.js';
import { admin, configuredTenant, createTenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** GET /media/:id: the image, to a bearer credential reaching its project; everyone else learns nothing. */
describe('GET /media/:id', () => {
  let t: TestApp;
  let db: TestDatabase;
  let owner: Awaited<ReturnType<typeof configuredTenant>>;
  let media: { id: string; url: string; mime_type: string; width: number; height: number };

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ SYNC_BUDGET_MS: '120000' });
    owner = await configuredTenant(t, { projects: 2 });
    const done = await callOk(t, owner.key, 'generate_image', { project_id: owner.projectIds[0], prompt: 'a loaf of bread', aspect_ratio: '1:1' });
    media = done.media;
  });
  afterAll(() => db?.drop());

  const get = (id: string, token?: string): Promise<Response> => {
    const req = t.http.get(`/media/${id}`);
    if (token) req.set('Authorization', `Bearer ${token}`);
    return req.buffer(true).parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });
  };
  const json = (res: Response) => JSON.parse((res.body as Buffer).toString('utf8'));

  it('serves the image with its Content-Type to an API key and to a grant reaching its project', async () => {
    expect(media).toEqual({ id: expect.any(String), url: `${t.config.publicUrl}/media/${media.id}`, mime_type: 'image/png', width: 1024, height: 1024 });
    const res = await get(media.id, owner.key);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect((res.body as Buffer).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(Number(res.headers['content-length'])).toBe((res.body as Buffer).length);

    const grant = await admin(
      t,
      'post',
      `/admin/v1/accounts/${owner.accountId}/grants`,
      { client_name: 'Claude', scopes: ['read'], projects: [{ project_id: owner.projectIds[0], role: 'viewer' }] },
      201,
    );
    const byGrant = await get(media.id, grant.access_token);
    expect(byGrant.status).toBe(200);
    expect(Buffer.compare(byGrant.body as Buffer, res.body as Buffer)).toBe(0);
  });

  it('no credential, an unknown or a revoked one: 401 with the resource metadata challenge', async () => {
    const key = await admin(
      t,
      'post',
      `/admin/v1/accounts/${owner.accountId}/api-keys`,
      { name: 'soon revoked', scopes: ['read'], projects: [{ project_id: owner.projectIds[0], role: 'viewer' }] },
      201,
    );
    await admin(t, 'delete', `/admin/v1/api-keys/${key.id}`, undefined, 204);
    for (const token of [undefined, 'rbk_' + 'x'.repeat(40), 'not-a-token', key.key]) {
      const res = await get(media.id, token);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${t.config.publicUrl}/.well-known/oauth-protected-resource"`);
      expect(json(res)).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    // A token in the query string is not a credential.
    const res = await t.http.get(`/media/${media.id}?access_token=${owner.key}`);
    expect(res.status).toBe(401);
  });

  it('compares the token as sent: with a no-break space before or after it, it is 401; the scheme is case-insensitive', async () => {
    for (const value of [`Bearer ${owner.key}\u00a0`, `Bearer \u00a0${owner.key}`, `Bearer  ${owner.key}`]) {
      const res = await t.http.get(`/media/${media.id}`).set('Authorization', value);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    expect((await t.http.get(`/media/${media.id}`).set('Authorization', `bearer ${owner.key}`)).status).toBe(200);
  });

  it('another account’s media, an unreachable project’s media, and unknown ids are the same 404', async () => {
    const stranger = await createTenant(t);
    const otherProjectOnly = await admin(
      t,
      'post',
      `/admin/v1/accounts/${owner.accountId}/api-keys`,
      { name: 'project 2 only', scopes: ['read', 'write', 'generate'], projects: [{ project_id: owner.projectIds[1], role: 'owner' }] },
      201,
    );
    const cases: [string, string][] = [
      [media.id, stranger.key],
      [media.id, otherProjectOnly.key],
      ['00000000-0000-7000-8000-000000000000', owner.key],
      ['not-a-uuid', owner.key],
    ];
    for (const [id, token] of cases) {
      const res = await get(id, token);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(json(res)).toEqual({ error: { code: 'not_found', message: `No image with id "${id}".` } });
    }
  });
});

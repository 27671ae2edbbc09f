import { newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// The console follows the Host rule of every page (docs/console.md#rules, docs/protocol.md#origin-and-host):
// on loopback, a Host header naming another host is a 403 page, before any session is looked at,
// and nothing is done; the server's own names are served as before.
describe('console Host rule', () => {
  let t: TestApp;
  let accountId: string;
  let projectIds: string[];
  let session: { cookie: string; csrf: string };

  beforeAll(async () => {
    t = await startTestApp();
    ({ accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Cooking' }]));
    const owner = await newUser(t);
    await addAccountMember(t, accountId, owner.id, 'owner');
    session = await signedIn(t, owner.id);
  });
  afterAll(() => t?.close());

  it.each(['127.0.0.1', 'localhost:4321', '[::1]'])('Host %s is served', async (host) => {
    const res = await t.http.get(`/console/accounts/${accountId}`).set('Host', host).set('Cookie', session.cookie).redirects(0);
    expect(res.status).toBe(200);
  });

  it('another Host is a 403 page, signed in or not, GET or POST, and the key is not made', async () => {
    for (const cookie of [session.cookie, undefined]) {
      const req = t.http.get('/console/').set('Host', 'rebound.example:8080').redirects(0);
      const res = await (cookie ? req.set('Cookie', cookie) : req);
      expect(res.status).toBe(403);
      expect(res.type).toBe('text/html');
      expect(res.text).toContain('rebound.example:8080');
    }
    const form = new URLSearchParams({
      csrf: session.csrf,
      name: 'rebound key',
      scope: 'read',
      project: projectIds[0],
      [`role_${projectIds[0]}`]: 'viewer',
    }).toString();
    const keysPath = `/console/accounts/${accountId}/keys`;
    const post = await t.http.post(keysPath).set('Host', 'rebound.example').set('Cookie', session.cookie).type('form').redirects(0).send(form);
    expect(post.status).toBe(403);
    // The same form on the server's own name makes the key: the refusal above was the Host's alone.
    expect((await t.http.post(keysPath).set('Cookie', session.cookie).type('form').redirects(0).send(form.replace('rebound+key', 'own+key'))).status).toBe(201);
    const keys = await t.http.get(keysPath).set('Cookie', session.cookie);
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('own key');
    expect(keys.text).not.toContain('rebound key');
  });
});

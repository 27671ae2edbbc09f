import { createDatabase, type TestDatabase } from '../support/database.js';
import { activity, createTenant, WRITER_ANSWERS } from '../support/fixtures.js';
import { callOk, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { accept, callModern, modern } from './mrtr-helpers.js';

/**
 * MCP 2026-07-28 input_required (SEP-2322) over raw HTTP: rounds, the signed requestState (tampered,
 * foreign, other tool, other arguments), a retry on another instance, capability filtering, -32021,
 * and the product's delete confirmation and writer setup; the 2025 era beside it is test/elicitation.
 */
const SECRET = 'mrtr-e2e-shared-request-state-secret-0123456789';

function expectInputRequired(res: Awaited<ReturnType<typeof modern>>, keys: string[]): { requestState: string; inputRequests: Record<string, any> } {
  expect(res.status).toBe(200);
  expect(res.error).toBeUndefined();
  expect(res.result.resultType).toBe('input_required');
  expect(Object.keys(res.result.inputRequests).sort()).toEqual([...keys].sort());
  expect(res.result.requestState).toEqual(expect.any(String));
  // Never the caching hints of a complete list/read result.
  expect(res.result.ttlMs).toBeUndefined();
  return res.result;
}

function expectText(res: Awaited<ReturnType<typeof modern>>, text: string): void {
  expect(res.status).toBe(200);
  expect(res.error).toBeUndefined();
  expect(res.result.resultType).toBe('complete');
  expect(res.result.content).toEqual([{ type: 'text', text }]);
}

function expectStateRefused(res: Awaited<ReturnType<typeof modern>>, why: RegExp): void {
  expect(res.status).toBe(200);
  expect(res.result).toBeUndefined();
  expect(res.error.code).toBe(-32602);
  expect(res.error.message).toMatch(/^requestState failed verification/);
  expect(res.error.message).toMatch(why);
}

describe('input_required (2026-07-28) with the conformance fixtures', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp({ REQUEST_STATE_SECRET: SECRET }, [ConformanceFixturesModule]);
    key = (await createTenant(t)).key;
  });
  afterAll(() => t?.close());

  it('round trip: input_required with the question and a state, then the answer with the state completes', async () => {
    const r1 = expectInputRequired(await callModern(t, key, 'test_input_required_result_elicitation'), ['user_name']);
    expect(r1.inputRequests.user_name).toEqual({
      method: 'elicitation/create',
      params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    });
    expectText(
      await callModern(
        t,
        key,
        'test_input_required_result_elicitation',
        {},
        { inputResponses: { user_name: accept({ name: 'Alice' }) }, requestState: r1.requestState },
      ),
      'Hello, Alice!',
    );
  });

  it('an answer sent without a state (none needed) completes; unknown extra keys are ignored', async () => {
    const res = await callModern(
      t,
      key,
      'test_input_required_result_elicitation',
      {},
      { inputResponses: { user_name: accept({ name: 'Bo' }), unknown_extra_key: { x: 1 }, another_unexpected: 'v' } },
    );
    expectText(res, 'Hello, Bo!');
  });

  it('an invalid answer (not an object, wrong key, missing field) is asked again; inputResponses that is not an object is -32602', async () => {
    for (const inputResponses of [{ user_name: 12345 }, { wrong_key: accept({ name: 'A' }) }, { user_name: accept({}) }, { user_name: { action: 'maybe' } }]) {
      expectInputRequired(await callModern(t, key, 'test_input_required_result_elicitation', {}, { inputResponses }), ['user_name']);
    }
    for (const inputResponses of [null, [], 'text']) {
      const res = await callModern(t, key, 'test_input_required_result_elicitation', {}, { inputResponses });
      expect([res.status, res.error?.code]).toEqual([200, -32602]);
      expect(res.error.message).toContain('"inputResponses" must be an object');
    }
  });

  it('sampling and roots/list, and all three at once with the state', async () => {
    const s = expectInputRequired(await callModern(t, key, 'test_input_required_result_sampling'), ['capital_question']);
    expect(s.inputRequests.capital_question.method).toBe('sampling/createMessage');
    const sample = { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' };
    expectText(
      await callModern(t, key, 'test_input_required_result_sampling', {}, { inputResponses: { capital_question: sample }, requestState: s.requestState }),
      'Sampling result: Paris',
    );

    const r = expectInputRequired(await callModern(t, key, 'test_input_required_result_list_roots'), ['client_roots']);
    expect(r.inputRequests.client_roots).toEqual({ method: 'roots/list', params: {} });
    expectText(
      await callModern(
        t,
        key,
        'test_input_required_result_list_roots',
        {},
        { inputResponses: { client_roots: { roots: [{ uri: 'file:///test/root', name: 'Test Root' }] } } },
      ),
      'Found 1 root(s)',
    );

    const m = expectInputRequired(await callModern(t, key, 'test_input_required_result_multiple_inputs'), ['user_name', 'greeting', 'client_roots']);
    // Part of the answers: only what is missing is asked again, the rest travels in the new state.
    const partial = expectInputRequired(
      await callModern(
        t,
        key,
        'test_input_required_result_multiple_inputs',
        {},
        { inputResponses: { user_name: accept({ name: 'Cy' }) }, requestState: m.requestState },
      ),
      ['greeting', 'client_roots'],
    );
    const done = await callModern(
      t,
      key,
      'test_input_required_result_multiple_inputs',
      {},
      { inputResponses: { greeting: { ...sample, content: { type: 'text', text: 'Hi!' } }, client_roots: { roots: [] } }, requestState: partial.requestState },
    );
    expectText(done, 'Name: Cy; Greeting: Hi!; Roots: 0');
  });

  it('multi-round: each round a new state carrying the earlier answers', async () => {
    const r1 = expectInputRequired(await callModern(t, key, 'test_input_required_result_multi_round'), ['step1']);
    const r2 = expectInputRequired(
      await callModern(
        t,
        key,
        'test_input_required_result_multi_round',
        {},
        { inputResponses: { step1: accept({ name: 'Dee' }) }, requestState: r1.requestState },
      ),
      ['step2'],
    );
    expect(r2.requestState).not.toBe(r1.requestState);
    expectText(
      await callModern(
        t,
        key,
        'test_input_required_result_multi_round',
        {},
        { inputResponses: { step2: accept({ color: 'teal' }) }, requestState: r2.requestState },
      ),
      'Multi-round complete for Dee who likes teal',
    );
  });

  it('a tampered state is -32602, never a new question', async () => {
    const r1 = expectInputRequired(await callModern(t, key, 'test_input_required_result_tampered_state'), ['confirm']);
    const answer = { confirm: accept({ ok: true }) };
    expectStateRefused(
      await callModern(t, key, 'test_input_required_result_tampered_state', {}, { inputResponses: answer, requestState: `${r1.requestState}-TAMPERED` }),
      /signature/,
    );
    const [part, mac] = r1.requestState.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(part, 'base64url').toString()), cred: 'someone-else' })).toString('base64url');
    expectStateRefused(
      await callModern(t, key, 'test_input_required_result_tampered_state', {}, { inputResponses: answer, requestState: `${forged}.${mac}` }),
      /signature/,
    );
    expectStateRefused(await callModern(t, key, 'test_input_required_result_tampered_state', {}, { inputResponses: answer, requestState: 42 }), /./);
    expectText(
      await callModern(t, key, 'test_input_required_result_tampered_state', {}, { inputResponses: answer, requestState: r1.requestState }),
      'integrity-ok: state verified (true)',
    );
  });

  it("another credential's state, another tool's state: -32602", async () => {
    const r1 = expectInputRequired(await callModern(t, key, 'test_input_required_result_request_state'), ['confirm']);
    const answer = { confirm: accept({ ok: true }) };
    const other = (await createTenant(t)).key;
    expectStateRefused(
      await callModern(t, other, 'test_input_required_result_request_state', {}, { inputResponses: answer, requestState: r1.requestState }),
      /another credential/,
    );
    expectStateRefused(
      await callModern(t, key, 'test_input_required_result_tampered_state', {}, { inputResponses: answer, requestState: r1.requestState }),
      /another request/,
    );
    expectText(
      await callModern(t, key, 'test_input_required_result_request_state', {}, { inputResponses: answer, requestState: r1.requestState }),
      'state-ok: requestState validated',
    );
  });

  it('asks only through the capabilities this request declared', async () => {
    const onlySampling = expectInputRequired(await callModern(t, key, 'test_input_required_result_capabilities', {}, {}, { sampling: {} }), ['sample_input']);
    expect(onlySampling.inputRequests.sample_input.method).toBe('sampling/createMessage');
    expectInputRequired(await callModern(t, key, 'test_input_required_result_capabilities', {}, {}, { elicitation: {} }), ['elicit_input']);
    // URL-mode elicitation only is not a form.
    expectText(await callModern(t, key, 'test_input_required_result_capabilities', {}, {}, { elicitation: { url: {} } }), 'No supported capabilities declared');
    expectText(await callModern(t, key, 'test_input_required_result_capabilities', {}, {}, {}), 'No supported capabilities declared');
  });

  it('a tool that cannot go on without an undeclared capability: -32021, HTTP 400, requiredCapabilities', async () => {
    const res = await callModern(t, key, 'test_streaming_elicitation', {}, {}, { sampling: {} });
    expect(res.status).toBe(400);
    expect(res.error.code).toBe(-32021);
    expect(res.error.data).toEqual({ requiredCapabilities: { elicitation: {} } });
    // With it declared: input_required as JSON, never a request on a stream.
    const asked = await callModern(t, key, 'test_streaming_elicitation', {}, {}, { elicitation: {} });
    expectInputRequired(asked, ['confirm']);
  });

  it('prompts/get asks too, and answers the messages once answered', async () => {
    const r1 = await modern(t, key, 'prompts/get', { name: 'test_input_required_result_prompt' });
    const { requestState } = expectInputRequired(r1, ['user_context']);
    const done = await modern(t, key, 'prompts/get', {
      name: 'test_input_required_result_prompt',
      inputResponses: { user_context: accept({ context: 'test context' }) },
      requestState,
    });
    expect(done.result).toMatchObject({
      resultType: 'complete',
      messages: [{ role: 'user', content: { type: 'text', text: 'Prompt with context: test context' } }],
    });
    // A prompts/get state is not a tools/call state.
    expectStateRefused(await callModern(t, key, 'test_input_required_result_elicitation', {}, { requestState }), /another request/);
  });

  it('lists are never input_required', async () => {
    for (const method of ['tools/list', 'prompts/list']) {
      const res = await modern(t, key, method);
      expect(res.result.resultType).toBe('complete');
    }
  });
});

describe('input_required (2026-07-28): the product tools, and instances sharing the secret', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let foreign: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    a = await db.app({ REQUEST_STATE_SECRET: SECRET });
    b = await db.app({ REQUEST_STATE_SECRET: SECRET, ROLE: 'api' });
    // Another deployment's secret on the same database.
    foreign = await db.app({ REQUEST_STATE_SECRET: 'another-deployment-request-state-secret-xyz', ROLE: 'api' });
  });
  afterAll(() => db?.drop());

  async function article(t: TestApp, token: string, title: string) {
    return callOk(t, token, 'create_article', { title, body: 'Flour, water, salt.' }) as Promise<{ id: string; handle: string }>;
  }

  async function live(token: string, id: string): Promise<boolean> {
    const res = await callModern(a, token, 'get_article', { id });
    return res.result.isError !== true;
  }

  it('delete_article asks to confirm (input_required on A), the retry on B deletes; a declined one deletes nothing', async () => {
    const tenant = await createTenant(a);
    const doomed = await article(a, tenant.key, 'Doomed');
    const r1 = expectInputRequired(await callModern(a, tenant.key, 'delete_article', { id: doomed.id }), ['confirm']);
    expect(r1.inputRequests.confirm.params.message).toContain('"Doomed"');
    expect(r1.inputRequests.confirm.params.requestedSchema.properties.confirm.type).toBe('boolean');
    expect(await live(tenant.key, doomed.id)).toBe(true);

    const done = await callModern(
      b,
      tenant.key,
      'delete_article',
      { id: doomed.id },
      { inputResponses: { confirm: accept({ confirm: true }) }, requestState: r1.requestState },
    );
    expect(done.result.resultType).toBe('complete');
    expect(toolJson(done.result)).toEqual({ deleted: true, id: doomed.id });
    expect(await live(tenant.key, doomed.id)).toBe(false);

    const kept = await article(a, tenant.key, 'Kept');
    for (const answer of [{ action: 'decline' }, { action: 'cancel' }, accept({ confirm: false })]) {
      const res = await callModern(b, tenant.key, 'delete_article', { id: kept.id }, { inputResponses: { confirm: answer } });
      expect(res.result.isError).toBe(true);
      expect(toolJson(res.result).error.code).toBe('not_confirmed');
    }
    expect(await live(tenant.key, kept.id)).toBe(true);
  });

  it("a confirmation's state is bound to the article: reused for another one it is -32602 and nothing is deleted", async () => {
    const tenant = await createTenant(a);
    const first = await article(a, tenant.key, 'First');
    const second = await article(a, tenant.key, 'Second');
    const r1 = expectInputRequired(await callModern(a, tenant.key, 'delete_article', { id: first.id }), ['confirm']);
    expectStateRefused(
      await callModern(
        a,
        tenant.key,
        'delete_article',
        { id: second.id },
        { inputResponses: { confirm: accept({ confirm: true }) }, requestState: r1.requestState },
      ),
      /other arguments/,
    );
    expect(await live(tenant.key, second.id)).toBe(true);
  });

  it("an instance with another secret refuses the state; the others' states work across them", async () => {
    const tenant = await createTenant(a);
    const doomed = await article(a, tenant.key, 'Elsewhere');
    const r1 = expectInputRequired(await callModern(b, tenant.key, 'delete_article', { id: doomed.id }), ['confirm']);
    expectStateRefused(
      await callModern(
        foreign,
        tenant.key,
        'delete_article',
        { id: doomed.id },
        { inputResponses: { confirm: accept({ confirm: true }) }, requestState: r1.requestState },
      ),
      /signature/,
    );
    expect(await live(tenant.key, doomed.id)).toBe(true);
    const done = await callModern(
      a,
      tenant.key,
      'delete_article',
      { id: doomed.id },
      { inputResponses: { confirm: accept({ confirm: true }) }, requestState: r1.requestState },
    );
    expect(toolJson(done.result).deleted).toBe(true);
  });

  it('without elicitation declared, delete_article deletes unconfirmed (as 2025 without the capability)', async () => {
    const tenant = await createTenant(a);
    const doomed = await article(a, tenant.key, 'Unasked');
    const res = await callModern(a, tenant.key, 'delete_article', { id: doomed.id }, {}, { sampling: {} });
    expect(res.result.resultType).toBe('complete');
    expect(toolJson(res.result)).toEqual({ deleted: true, id: doomed.id });
  });

  it('write_article without a writer config asks the setup form (recorded setup_required); the answers are saved and the job goes on', async () => {
    const tenant = await createTenant(a);
    const r1 = expectInputRequired(await callModern(a, tenant.key, 'write_article', { brief: 'A vegetable garden' }), ['writer_setup']);
    const form = r1.inputRequests.writer_setup.params;
    expect(form.message).toContain('write_article');
    expect(Object.keys(form.requestedSchema.properties).sort()).toEqual(Object.keys(WRITER_ANSWERS).sort());
    expect(form.requestedSchema.properties.length.enum).toEqual(expect.any(Array));
    // Nothing saved yet.
    expect(toolJson((await callModern(a, tenant.key, 'get_agent_config', {})).result)).toEqual({ agent: 'writer', config: null });

    const done = await callModern(
      b,
      tenant.key,
      'write_article',
      { brief: 'A vegetable garden' },
      { inputResponses: { writer_setup: accept(WRITER_ANSWERS) }, requestState: r1.requestState },
    );
    expect(done.result.resultType).toBe('complete');
    expect(done.result.isError).toBeUndefined();
    expect(toolJson(done.result).status).not.toBe('setup_required');
    const saved = toolJson((await callModern(a, tenant.key, 'get_agent_config', {})).result);
    expect(saved.config.answers).toMatchObject({ audience: WRITER_ANSWERS.audience, tone: WRITER_ANSWERS.tone, length: WRITER_ANSWERS.length });
    const entries = await activity(a, tenant.accountId, 'tool=write_article');
    expect(entries.map((e) => e.outcome).sort()).toEqual(['ok', 'setup_required']);
  });

  it('write_article without elicitation declared, or declined: the documented setup_required answer exactly', async () => {
    const tenant = await createTenant(a);
    const seed = await callModern(a, tenant.key, 'write_article', { brief: 'x' }, {}, {});
    expect(seed.result.resultType).toBe('complete');
    const setup = toolJson(seed.result);
    expect(setup.status).toBe('setup_required');
    const declined = await callModern(a, tenant.key, 'write_article', { brief: 'x' }, { inputResponses: { writer_setup: { action: 'decline' } } });
    expect(toolJson(declined.result)).toEqual(setup);
  });
});

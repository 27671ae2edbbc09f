import type { AppConfig } from '../config/config.js';
import type { ClientRequests } from './client-requests.service.js';
import { InputRequired, validAnswer, type AskInput, type InputRequest } from '../protocol/input.js';
import { InputRequests } from './input-requests.js';
import { RpcError } from '../protocol/json-rpc.js';
import { signState } from './request-state.js';

const SECRET = Buffer.from('x'.repeat(32));
const config = { requestStateSecret: SECRET, requestStateSecretGenerated: false } as AppConfig;
const ALL_CAPS = { elicitation: {}, sampling: {}, roots: { listChanged: true } };

const NAME: InputRequest = {
  method: 'elicitation/create',
  params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};
const COLOR: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Favourite colour?',
    requestedSchema: { type: 'object', properties: { color: { type: 'string', enum: ['red', 'blue'] } }, required: ['color'] },
  },
};
const SAMPLE: InputRequest = {
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 },
};
const ROOTS: InputRequest = { method: 'roots/list' };

function input(params: Record<string, unknown>, over: Partial<AskInput> = {}): AskInput {
  return {
    principal: { credential: { id: 'cred-1' } } as AskInput['principal'],
    era: 'modern',
    client: { capabilities: ALL_CAPS, info: null, logLevel: null },
    session: null,
    stream: {} as AskInput['stream'],
    signal: new AbortController().signal,
    method: 'tools/call',
    name: 'tool_a',
    args: {},
    params,
    ...over,
  };
}

function service(clientRequests: Partial<ClientRequests> = {}): InputRequests {
  return new InputRequests(clientRequests as ClientRequests, config);
}

async function signal(run: Promise<unknown>): Promise<InputRequired> {
  try {
    await run;
  } catch (err) {
    expect(err).toBeInstanceOf(InputRequired);
    return err as InputRequired;
  }
  throw new Error('expected input_required');
}

describe('InputRequests, 2026-07-28 era', () => {
  it('round 0: input_required with the questions and a state; the retry with the answer and the state completes', async () => {
    const first = await signal(service().forCall(input({})).ask({ user_name: NAME }));
    expect(first.result).toEqual({ resultType: 'input_required', inputRequests: { user_name: NAME }, requestState: expect.any(String) });
    expect(first.outcome).toBe('ok');
    const answers = await service()
      .forCall(input({ inputResponses: { user_name: { action: 'accept', content: { name: 'Alice', extra: 1 } } }, requestState: first.requestState }))
      .ask({ user_name: NAME });
    expect(answers).toEqual({ user_name: { action: 'accept', content: { name: 'Alice' } } });
  });

  it('an answer without any state is taken (no state issued, or the client answered up front); extra keys are ignored', async () => {
    const answers = await service()
      .forCall(input({ inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } }, unknown_extra_key: 1, another: { action: 'accept' } } }))
      .ask({ user_name: NAME });
    expect(answers.user_name).toEqual({ action: 'accept', content: { name: 'Alice' } });
  });

  it('multi-round: earlier answers come back through the state, each round a new state', async () => {
    const asks = async (params: Record<string, unknown>) => {
      const asker = service().forCall(input(params));
      const { step1 } = await asker.ask({ step1: NAME });
      const { step2 } = await asker.ask({ step2: COLOR });
      return `${String(step1?.content?.name)} likes ${String(step2?.content?.color)}`;
    };
    const r1 = await signal(asks({}));
    expect(Object.keys(r1.inputRequests)).toEqual(['step1']);
    const r2 = await signal(asks({ requestState: r1.requestState, inputResponses: { step1: { action: 'accept', content: { name: 'Bo' } } } }));
    expect(Object.keys(r2.inputRequests)).toEqual(['step2']);
    expect(r2.requestState).not.toBe(r1.requestState);
    // Round 3 sends only step 2's answer: step 1's is in the state.
    expect(await asks({ requestState: r2.requestState, inputResponses: { step2: { action: 'accept', content: { color: 'blue' } } } })).toBe('Bo likes blue');
  });

  it('asks only for what is missing, all at once', async () => {
    const asker = service().forCall(input({ inputResponses: { user_name: { action: 'decline' } } }));
    const signalled = await signal(asker.ask({ user_name: NAME, greeting: SAMPLE, client_roots: ROOTS }));
    expect(signalled.inputRequests).toEqual({ greeting: SAMPLE, client_roots: { method: 'roots/list', params: {} } });
  });

  it('takes valid sampling and roots answers', async () => {
    const sample = { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm', stopReason: 'endTurn' };
    const answers = await service()
      .forCall(input({ inputResponses: { s: sample, r: { roots: [{ uri: 'file:///a', name: 'A', junk: 1 }] } } }))
      .ask({ s: SAMPLE, r: ROOTS });
    expect(answers).toEqual({ s: sample, r: { roots: [{ uri: 'file:///a', name: 'A' }] } });
  });

  it.each([
    ['a number', 12345],
    ['null', null],
    ['an array', [{ action: 'accept' }]],
    ['no action', { content: { name: 'A' } }],
    ['an unknown action', { action: 'maybe', content: { name: 'A' } }],
    ['accept without content', { action: 'accept' }],
    ['accept without the required field', { action: 'accept', content: {} }],
    ['accept with a field of the wrong type', { action: 'accept', content: { name: 7 } }],
  ])('an invalid elicitation answer (%s) is not an answer: asked again', async (_label, value) => {
    const signalled = await signal(
      service()
        .forCall(input({ inputResponses: { user_name: value } }))
        .ask({ user_name: NAME }),
    );
    expect(Object.keys(signalled.inputRequests)).toEqual(['user_name']);
  });

  it('an enum value outside the list, a sampling answer without a model, roots that are not a list: asked again', async () => {
    await signal(
      service()
        .forCall(input({ inputResponses: { c: { action: 'accept', content: { color: 'green' } } } }))
        .ask({ c: COLOR }),
    );
    await signal(
      service()
        .forCall(input({ inputResponses: { s: { role: 'assistant', content: { type: 'text', text: 'x' } } } }))
        .ask({ s: SAMPLE }),
    );
    await signal(
      service()
        .forCall(input({ inputResponses: { r: { roots: 'file:///' } } }))
        .ask({ r: ROOTS }),
    );
    expect(validAnswer(ROOTS, { roots: [{ name: 'no uri' }] })).toBeUndefined();
  });

  it.each([null, [], 'text', 3])('inputResponses %p (not an object) is -32602 before anything runs', (value) => {
    expect(() => service().forCall(input({ inputResponses: value }))).toThrow(RpcError);
    try {
      service().forCall(input({ inputResponses: value }));
    } catch (err) {
      expect((err as RpcError).code).toBe(-32602);
      expect((err as RpcError).message).toContain('"inputResponses" must be an object');
    }
  });

  it('a tampered, foreign, other-tool or other-arguments state is -32602, never a new question', async () => {
    const { requestState } = await signal(
      service()
        .forCall(input({}, { args: { a: 1 } }))
        .ask({ user_name: NAME }),
    );
    const answer = { user_name: { action: 'accept', content: { name: 'A' } } };
    const cases: Partial<AskInput>[] = [
      { params: { requestState: `${requestState}-TAMPERED`, inputResponses: answer } },
      { params: { requestState, inputResponses: answer }, principal: { credential: { id: 'cred-2' } } as AskInput['principal'] },
      { params: { requestState, inputResponses: answer }, name: 'tool_b' },
      { params: { requestState, inputResponses: answer }, method: 'prompts/get' },
      { params: { requestState, inputResponses: answer }, args: { a: 2 } },
      { params: { requestState: 42 } },
    ];
    for (const over of cases) {
      expect(() => service().forCall(input(over.params as Record<string, unknown>, { args: { a: 1 }, ...over }))).toThrow(/requestState/);
    }
    // The genuine one passes.
    expect(
      await service()
        .forCall(input({ requestState, inputResponses: answer }, { args: { a: 1 } }))
        .ask({ user_name: NAME }),
    ).toEqual({ user_name: answer.user_name });
  });

  it('a state issued by another instance with the same secret is accepted', async () => {
    const state = signState(
      Buffer.from('x'.repeat(32)),
      { credentialId: 'cred-1', method: 'tools/call', name: 'tool_a', args: {} },
      { answers: { user_name: { action: 'accept', content: { name: 'Z' } } } },
    );
    expect(
      (
        await service()
          .forCall(input({ requestState: state }))
          .ask({ user_name: NAME })
      ).user_name?.content,
    ).toEqual({ name: 'Z' });
  });

  it('never asks for what the request did not declare: its answer is null', async () => {
    const asker = service().forCall(input({}, { client: { capabilities: { sampling: {} }, info: null, logLevel: null } }));
    expect(asker.canAsk('elicitation/create')).toBe(false);
    expect(asker.canAsk('sampling/createMessage')).toBe(true);
    expect(asker.canAsk('roots/list')).toBe(false);
    const signalled = await signal(asker.ask({ e: NAME, s: SAMPLE }));
    expect(Object.keys(signalled.inputRequests)).toEqual(['s']);
    const none = service().forCall(input({}, { client: { capabilities: {}, info: null, logLevel: null } }));
    expect(await none.ask({ e: NAME, s: SAMPLE, r: ROOTS })).toEqual({ e: null, s: null, r: null });
  });

  it('elicitation declared for URL mode only is not form elicitation', () => {
    const asker = service().forCall(input({}, { client: { capabilities: { elicitation: { url: {} } }, info: null, logLevel: null } }));
    expect(asker.canAsk('elicitation/create')).toBe(false);
  });

  it('records the outcome the asker names (setup_required)', async () => {
    const signalled = await signal(service().forCall(input({})).ask({ setup: NAME }, { outcome: 'setup_required' }));
    expect(signalled.outcome).toBe('setup_required');
  });

  it('RpcError.missingCapability: -32021, HTTP 400, requiredCapabilities as an object', () => {
    const err = RpcError.missingCapability({ sampling: {} });
    expect([err.code, err.httpStatus, err.data]).toEqual([-32021, 400, { requiredCapabilities: { sampling: {} } }]);
  });
});

describe('InputRequests, legacy era', () => {
  it('asks over ClientRequests one at a time and checks elicitation answers; null when it cannot ask', async () => {
    const asked: string[] = [];
    const clientRequests = {
      canAsk: (_call: unknown, method: string) => method !== 'roots/list',
      ask: (_call: unknown, method: string) => {
        asked.push(method);
        return Promise.resolve(
          method === 'elicitation/create'
            ? { action: 'accept', content: { name: 'L' } }
            : method === 'roots/list'
              ? null
              : { role: 'assistant', content: {}, model: 'm' },
        );
      },
    } as unknown as ClientRequests;
    const asker = service(clientRequests).forCall(input({ inputResponses: 'ignored in 2025' }, { era: 'legacy' }));
    expect(asker.canAsk('roots/list')).toBe(false);
    expect(await asker.ask({ a: NAME, b: SAMPLE, c: ROOTS })).toEqual({
      a: { action: 'accept', content: { name: 'L' } },
      b: { role: 'assistant', content: {}, model: 'm' },
      c: null,
    });
    expect(asked).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
  });
});

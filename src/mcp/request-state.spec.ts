import { createHmac } from 'node:crypto';
import { RpcError } from '../protocol/json-rpc.js';
import { MAX_STATE_LENGTH, signState, STATE_TTL_S, verifyState, type StateBinding } from './request-state.js';

const SECRET = Buffer.from('a-request-state-secret-of-32-characters!');
const OTHER_SECRET = Buffer.from('another-request-state-secret-of-32-chars');
const NOW = Date.UTC(2026, 6, 28, 12, 0, 0);
const BINDING: StateBinding = { credentialId: 'cred-1', method: 'tools/call', name: 'delete_article', args: { id: 'a1', project_id: 'p1' } };

function refusal(run: () => unknown): RpcError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(RpcError);
    return err as RpcError;
  }
  throw new Error('expected a refusal');
}

describe('requestState: sign and verify', () => {
  it('round-trips the data for the same request', () => {
    const data = { answers: { confirm: { action: 'accept', content: { confirm: true } } }, round: 2 };
    const state = signState(SECRET, BINDING, data, NOW);
    expect(state).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyState(SECRET, state, BINDING, NOW + 1000)).toEqual(data);
  });

  it('the same arguments in another key order are the same request', () => {
    const state = signState(SECRET, BINDING, 1, NOW);
    expect(verifyState(SECRET, state, { ...BINDING, args: { project_id: 'p1', id: 'a1' } }, NOW)).toBe(1);
  });

  it('no arguments and {} are the same request', () => {
    const state = signState(SECRET, { ...BINDING, args: undefined }, 'x', NOW);
    expect(verifyState(SECRET, state, { ...BINDING, args: {} }, NOW)).toBe('x');
  });

  it('each round gets its own state', () => {
    expect(signState(SECRET, BINDING, { round: 1 }, NOW)).not.toBe(signState(SECRET, BINDING, { round: 2 }, NOW));
  });

  it('refuses a tampered state: the suffix the conformance suite appends, a changed payload, a changed MAC', () => {
    const state = signState(SECRET, BINDING, { round: 1 }, NOW);
    const [part, mac] = state.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(part, 'base64url').toString()), d: { round: 9 } })).toString('base64url');
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    for (const bad of [`${state}-TAMPERED`, `${forged}.${mac}`, `${part}.${flipped}`, `${part}.${mac}=`, `${part}X.${mac}`]) {
      const err = refusal(() => verifyState(SECRET, bad, BINDING, NOW));
      expect(err.code).toBe(-32602);
      expect(err.httpStatus).toBe(200);
      expect(err.message).toMatch(/^requestState failed verification/);
    }
  });

  it('refuses a state signed with another secret (another deployment), and accepts one signed with the shared secret', () => {
    const theirs = signState(OTHER_SECRET, BINDING, 1, NOW);
    expect(refusal(() => verifyState(SECRET, theirs, BINDING, NOW)).message).toContain('signature does not match');
    // Two instances configured with the same REQUEST_STATE_SECRET accept each other's states.
    expect(verifyState(Buffer.from(SECRET), signState(Buffer.from(SECRET.toString()), BINDING, 1, NOW), BINDING, NOW)).toBe(1);
  });

  it('refuses a well-signed payload that is not a state (forged with the secret: version, JSON)', () => {
    const sign = (text: string) => {
      const part = Buffer.from(text).toString('base64url');
      return `${part}.${createHmac('sha256', SECRET).update(part).digest('base64url')}`;
    };
    expect(refusal(() => verifyState(SECRET, sign('not json'), BINDING, NOW)).message).toContain('not a state this server issued');
    expect(refusal(() => verifyState(SECRET, sign('null'), BINDING, NOW)).message).toContain('not a state this server issued');
    expect(refusal(() => verifyState(SECRET, sign(JSON.stringify({ v: 2 })), BINDING, NOW)).message).toContain('not a state this server issued');
  });

  it("refuses another credential's state", () => {
    const state = signState(SECRET, BINDING, 1, NOW);
    expect(refusal(() => verifyState(SECRET, state, { ...BINDING, credentialId: 'cred-2' }, NOW)).message).toContain('another credential');
  });

  it('refuses a state of another tool, another method, or other arguments', () => {
    const state = signState(SECRET, BINDING, 1, NOW);
    expect(refusal(() => verifyState(SECRET, state, { ...BINDING, name: 'write_article' }, NOW)).message).toContain(
      'another request (tools/call delete_article)',
    );
    expect(refusal(() => verifyState(SECRET, state, { ...BINDING, method: 'prompts/get' }, NOW)).message).toContain('another request');
    expect(refusal(() => verifyState(SECRET, state, { ...BINDING, args: { id: 'a2', project_id: 'p1' } }, NOW)).message).toContain('other arguments');
  });

  it('expires after STATE_TTL_S', () => {
    const state = signState(SECRET, BINDING, 1, NOW);
    expect(verifyState(SECRET, state, BINDING, NOW + (STATE_TTL_S - 1) * 1000)).toBe(1);
    expect(refusal(() => verifyState(SECRET, state, BINDING, NOW + STATE_TTL_S * 1000)).message).toContain('expired');
  });

  it('refuses what is not a state: wrong type, empty, no dot, too long', () => {
    expect(refusal(() => verifyState(SECRET, 42, BINDING, NOW)).message).toMatch(/^requestState failed verification: it must be the string/);
    expect(refusal(() => verifyState(SECRET, null, BINDING, NOW)).code).toBe(-32602);
    for (const bad of ['', 'nodot', '.abc', 'x'.repeat(MAX_STATE_LENGTH + 1)]) {
      expect(refusal(() => verifyState(SECRET, bad, BINDING, NOW)).code).toBe(-32602);
    }
  });
});

import { REDACTED, redactingLogOptions, redactSecrets, redactUrl } from './log-redaction.js';

describe('redactSecrets', () => {
  it('replaces credential headers, whatever their case, and keeps the others', () => {
    const headers = {
      authorization: 'Bearer x',
      Cookie: 'a=b',
      'set-cookie': ['s=1'],
      'x-api-token': 't',
      'x-client-secret': 's',
      'x-api-key': 'k',
      host: 'h',
      'content-type': 'application/json',
    };
    expect(redactSecrets(headers)).toEqual({
      authorization: REDACTED,
      Cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-token': REDACTED,
      'x-client-secret': REDACTED,
      'x-api-key': REDACTED,
      host: 'h',
      'content-type': 'application/json',
    });
    expect(headers.authorization).toBe('Bearer x'); // a copy: the request itself is untouched
  });

  it('reaches nested objects and arrays, and fields named *token* / *secret* / *password*', () => {
    expect(
      redactSecrets({
        req: { headers: { authorization: 'Bearer y' } },
        items: [{ access_token: 'a', refresh_token: 'r', name: 'n' }],
        client_secret: 'c',
        password: 'p',
      }),
    ).toEqual({
      req: { headers: { authorization: REDACTED } },
      items: [{ access_token: REDACTED, refresh_token: REDACTED, name: 'n' }],
      client_secret: REDACTED,
      password: REDACTED,
    });
  });

  it('masks our secrets wherever they stand in a string', () => {
    expect(redactSecrets({ msg: 'key rbk_abcdefghijklmnop and rbg_ABCDEFGH12345678 failed', url: '/x?t=rba_0123456789abcdef' })).toEqual({
      msg: `key ${REDACTED} and ${REDACTED} failed`,
      url: `/x?t=${REDACTED}`,
    });
    expect(redactSecrets({ msg: 'refresh rbr_abcdefghijklmnop, link /oauth/login?x=rbl_ABCDEFGH12345678' })).toEqual({
      msg: `refresh ${REDACTED}, link /oauth/login?x=${REDACTED}`,
    });
    expect(redactSecrets('rbk_')).toBe('rbk_');
  });

  it('leaves errors to pino (their stack is kept) and survives cycles by depth', () => {
    const err = new Error('boom');
    expect(redactSecrets({ err }).err).toBe(err);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => redactSecrets(cyclic)).not.toThrow();
  });

  it('masks credential-like query parameters in a URL and in the request the logs bind', () => {
    expect(redactUrl('/media/x?access_token=abc&size=2&api_key=k#top')).toBe(`/media/x?access_token=${REDACTED}&size=2&api_key=${REDACTED}#top`);
    expect(redactUrl('/admin/v1/accounts?limit=5')).toBe('/admin/v1/accounts?limit=5');
    const req = redactingLogOptions.serializers.req({
      url: '/mcp?token=t0ken',
      query: { token: 't0ken', page: '1' },
      headers: { authorization: 'Bearer t0ken' },
    });
    expect(JSON.stringify(req)).not.toContain('t0ken');
    expect(req.query).toEqual({ token: REDACTED, page: '1' });
  });
});

import { canonicalResource, requestedScopes, withQuery } from './authorize-params.js';

describe('authorize parameters', () => {
  const PUBLIC_URL = 'https://Reblog.example.com';

  it.each([
    ['https://reblog.example.com/mcp', 'https://Reblog.example.com/mcp'],
    ['https://REBLOG.EXAMPLE.COM/mcp', 'https://Reblog.example.com/mcp'],
    ['https://reblog.example.com/mcp/', 'https://Reblog.example.com/mcp'],
    ['https://reblog.example.com:443/mcp', 'https://Reblog.example.com/mcp'],
    ['https://reblog.example.com', 'https://Reblog.example.com'],
    ['https://reblog.example.com/', 'https://Reblog.example.com'],
  ])('resource %s is this server (%s)', (value, canonical) => expect(canonicalResource(value, PUBLIC_URL)).toBe(canonical));

  it.each([
    'http://reblog.example.com/mcp',
    'https://reblog.example.com:8443/mcp',
    'https://reblog.example.com.evil.example/mcp',
    'https://reblog.example.com/MCP',
    'https://reblog.example.com/mcp/x',
    'https://reblog.example.com/mcp?x=1',
    'https://reblog.example.com/mcp#x',
    'https://user@reblog.example.com/mcp',
    'reblog.example.com/mcp',
    '',
  ])('resource %s is not', (value) => expect(canonicalResource(value, PUBLIC_URL)).toBeNull());

  it('a PUBLIC_URL with a path: the resource is under it', () => {
    expect(canonicalResource('https://example.com/reblog/mcp', 'https://example.com/reblog')).toBe('https://example.com/reblog/mcp');
    expect(canonicalResource('https://example.com/mcp', 'https://example.com/reblog')).toBeNull();
  });

  it('scopes: none means all four; unknown ones dropped; only unknown ones is null', () => {
    expect(requestedScopes(undefined)).toEqual(['read', 'write', 'generate', 'delete']);
    expect(requestedScopes('')).toEqual(['read', 'write', 'generate', 'delete']);
    expect(requestedScopes('delete read openid')).toEqual(['read', 'delete']);
    expect(requestedScopes('openid profile')).toBeNull();
  });

  it('parameters are added to the redirect URI as registered', () => {
    expect(withQuery('https://a.example/cb?x=1', { code: 'c d', state: null, iss: 'https://i.example' })).toBe(
      'https://a.example/cb?x=1&code=c+d&iss=https%3A%2F%2Fi.example',
    );
    expect(withQuery('cursor://anysphere.cursor-mcp/oauth/callback', { error: 'access_denied', state: '' })).toBe(
      'cursor://anysphere.cursor-mcp/oauth/callback?error=access_denied&state=',
    );
  });
});

import { formActionSource, redirectDisplay, redirectUriProblem, redirectUriRegistered } from './redirect-uris.js';

describe('redirect URIs', () => {
  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'http://127.0.0.1:53682/callback',
    'http://localhost/cb',
    'http://[::1]:8080/',
    'com.example.app:/oauth2redirect',
  ])('%s may be registered', (uri) => expect(redirectUriProblem(uri)).toBeNull());

  it.each([
    'javascript:alert(1)',
    'JAVASCRIPT:alert(1)',
    'data:text/html,x',
    'file:///etc/passwd',
    'http://example.com/cb',
    'https://a.example/cb#x',
    'https://u@a.example/cb',
    'vscode://u:p@x/cb',
    'cb',
    '',
    'https://a.example/c b',
  ])('%s may not', (uri) => expect(redirectUriProblem(uri)).toEqual(expect.any(String)));

  describe('matching (exact; loopback on any port, RFC 8252 §7.3)', () => {
    const registered = [
      'http://127.0.0.1:3000/callback',
      'http://localhost/cb?x=1',
      'https://claude.ai/api/mcp/auth_callback',
      'cursor://anysphere.cursor-mcp/oauth/callback',
    ];

    it.each([
      'http://127.0.0.1:3000/callback',
      'http://127.0.0.1:54321/callback',
      'http://127.0.0.1/callback',
      'http://localhost:9/cb?x=1',
      'https://claude.ai/api/mcp/auth_callback',
      'cursor://anysphere.cursor-mcp/oauth/callback',
    ])('%s matches', (uri) => expect(redirectUriRegistered(registered, uri)).toBe(true));

    it.each([
      ['localhost is not 127.0.0.1', 'http://localhost:3000/callback'],
      ['127.0.0.1 is not localhost', 'http://127.0.0.1/cb?x=1'],
      ['[::1] is neither', 'http://[::1]:3000/callback'],
      ['another path', 'http://127.0.0.1:3000/callback/x'],
      ['another query', 'http://localhost/cb?x=2'],
      ['https is not http on loopback', 'https://127.0.0.1:3000/callback'],
      ['no port trick on https', 'https://claude.ai:444/api/mcp/auth_callback'],
      ['a trailing slash', 'https://claude.ai/api/mcp/auth_callback/'],
      ['a case change in the path', 'https://claude.ai/api/MCP/auth_callback'],
      ['another app', 'cursor://evil/oauth/callback'],
    ])('%s', (_what, uri) => expect(redirectUriRegistered(registered, uri)).toBe(false));
  });

  it('form-action allows the origin of a web redirect and the scheme of an app', () => {
    expect(formActionSource('https://claude.ai/api/mcp/auth_callback')).toBe('https://claude.ai');
    expect(formActionSource('http://127.0.0.1:53682/callback')).toBe('http://127.0.0.1:53682');
    expect(formActionSource('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor:');
  });

  it('the consent page shows the host, or the scheme and host of an app', () => {
    expect(redirectDisplay('https://chatgpt.com/connector/oauth/x')).toBe('chatgpt.com');
    expect(redirectDisplay('http://127.0.0.1:53682/callback')).toBe('127.0.0.1:53682');
    expect(redirectDisplay('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor://anysphere.cursor-mcp');
    expect(redirectDisplay('com.example.app:/cb')).toBe('com.example.app:');
  });
});

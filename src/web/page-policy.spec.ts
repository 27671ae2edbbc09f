import { crossSite, hostRule } from './page-policy.js';

const PUBLIC = 'https://reblog.example.com';

describe('page policy', () => {
  describe('the Host rule', () => {
    it('on loopback: PUBLIC_URL host (with or without port), ALLOWED_HOSTS and loopback names on any port', () => {
      const allowed = hostRule({ host: '127.0.0.1', publicUrl: 'http://127.0.0.1:3000', allowedHosts: ['api.example.org'] });
      for (const host of ['127.0.0.1:3000', 'localhost:4321', '[::1]:80', 'LOCALHOST', 'api.example.org', 'API.example.org:8443'])
        expect([host, allowed(host)]).toEqual([host, true]);
      for (const host of ['evil.example', 'localhost.evil.example', '', undefined]) expect([host, allowed(host)]).toEqual([host, false]);
    });

    it('off loopback: any Host unless ALLOWED_HOSTS is set, then only those and PUBLIC_URL host', () => {
      expect(hostRule({ host: '0.0.0.0', publicUrl: PUBLIC })('anything.example')).toBe(true);
      const allowed = hostRule({ host: '0.0.0.0', publicUrl: PUBLIC, allowedHosts: ['api.example.org'] });
      expect([allowed('reblog.example.com'), allowed('reblog.example.com:443'), allowed('api.example.org')]).toEqual([true, true, true]);
      expect([allowed('localhost'), allowed('other.example.org')]).toEqual([false, false]);
    });
  });

  describe('the cross-site rule', () => {
    it.each([
      ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }, { by: 'sec-fetch-site' }],
      ['a foreign Origin', { origin: 'https://evil.example' }, { by: 'origin', origin: 'https://evil.example' }],
      ['Sec-Fetch-Site first, even with our Origin', { 'sec-fetch-site': 'cross-site', origin: PUBLIC }, { by: 'sec-fetch-site' }],
    ])('%s is another site', (_, headers, expected) => {
      expect(crossSite(headers, PUBLIC)).toEqual(expected);
    });

    it.each([
      ['no header at all', {}],
      ['our Origin', { origin: PUBLIC }],
      ['Origin: null (a no-referrer page)', { origin: 'null' }],
      ['Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin', origin: PUBLIC }],
      ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ])('%s is not', (_, headers) => {
      expect(crossSite(headers, PUBLIC)).toBeNull();
    });
  });
});

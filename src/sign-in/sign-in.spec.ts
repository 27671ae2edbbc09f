import type { Request } from 'express';
import { BlockList } from 'node:net';
import { peerAddress } from './proxy-sign-in.middleware.js';
import { parsePastedLink } from '../login-links/return-to.js';

const peer = (remoteAddress: string | undefined) => peerAddress({ socket: { remoteAddress } } as unknown as Request);

describe('peerAddress (the proxy header is trusted by the TCP peer)', () => {
  it('reads an IPv4-mapped IPv6 peer as the IPv4 it is, so 10.0.0.0/8 matches it', () => {
    expect(peer('::ffff:10.1.2.3')).toEqual({ address: '10.1.2.3', family: 'ipv4' });
    expect(peer('::FFFF:127.0.0.1')).toEqual({ address: '127.0.0.1', family: 'ipv4' });
    const trusted = new BlockList();
    trusted.addSubnet('10.0.0.0', 8, 'ipv4');
    const mapped = peer('::ffff:10.1.2.3')!;
    expect(trusted.check(mapped.address, mapped.family)).toBe(true);
    const outside = peer('::ffff:11.1.2.3')!;
    expect(trusted.check(outside.address, outside.family)).toBe(false);
  });

  it('keeps IPv6 and IPv4 peers as they are; none without an address', () => {
    expect(peer('::1')).toEqual({ address: '::1', family: 'ipv6' });
    expect(peer('fd00::5')).toEqual({ address: 'fd00::5', family: 'ipv6' });
    expect(peer('192.0.2.1')).toEqual({ address: '192.0.2.1', family: 'ipv4' });
    expect(peer(undefined)).toBeNull();
  });
});

describe('parsePastedLink', () => {
  const token = 'rbl_' + 'a'.repeat(43);
  it('takes the whole link, with its return_to, or the bare token', () => {
    expect(parsePastedLink(` https://x.test/oauth/login?token=${token}&return_to=%2Fconsole%2Fa `)).toEqual({ token, returnTo: '/console/a' });
    expect(parsePastedLink(token)).toEqual({ token, returnTo: null });
    expect(parsePastedLink(`Your link: ${token}.`)).toEqual({ token, returnTo: null });
  });

  it('answers no token for nothing usable', () => {
    expect(parsePastedLink('')).toEqual({ token: null, returnTo: null });
    expect(parsePastedLink(undefined)).toEqual({ token: null, returnTo: null });
    expect(parsePastedLink(['a'])).toEqual({ token: null, returnTo: null });
  });
});

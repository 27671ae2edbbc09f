import { isPublicAddress } from './address-policy.js';

// The address check of the metadata-document fetch, range by range. Nothing here is dialled.
describe('isPublicAddress', () => {
  it.each([
    ['loopback', ['127.0.0.1', '127.255.255.254', '::1']],
    ['private (RFC 1918)', ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255']],
    ['link-local, cloud metadata included', ['169.254.0.1', '169.254.169.254', 'fe80::1', 'fe80::abcd:1234%eth0', 'febf:ffff::1']],
    ['unique-local', ['fc00::1', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['unspecified', ['0.0.0.0', '0.1.2.3', '::']],
    ['carrier-grade NAT', ['100.64.0.1', '100.127.255.255']],
    ['multicast and reserved', ['224.0.0.1', '239.255.255.255', '240.0.0.1', '255.255.255.255', 'ff02::1']],
    ['documentation and benchmarking', ['192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '2001:db8::1']],
    ['site-local (deprecated)', ['fec0::1']],
    [
      'IPv4-mapped IPv6 of private ones',
      ['::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:10.0.0.1', '::ffff:169.254.169.254', '::ffff:c0a8:101', '0:0:0:0:0:ffff:192.168.1.1'],
    ],
    ['IPv4-compatible (deprecated) and IPv4-translated IPv6', ['::127.0.0.1', '::10.0.0.1', '::8.8.8.8', '::ffff:0:7f00:1', '::ffff:0:8.8.8.8']],
    ['NAT64 of private ones', ['64:ff9b::10.0.0.1', '64:ff9b::7f00:1', '64:ff9b:1::1']],
    ['6to4 of private ones', ['2002:7f00:1::1', '2002:c0a8:101::1', '2002:a00:1::', '2002::1', '2002:a9fe:a9fe::1']],
    ['Teredo', ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2']],
    ['not an address', ['', 'localhost', 'example.com', '1.2.3', '::g', '1:2:3:4:5:6:7:8:9', '1::2::3']],
  ])('%s: refused', (_what, addresses) => {
    for (const address of addresses) expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: false });
  });

  it.each([
    [
      'public IPv4',
      ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.15.255.255', '172.32.0.1', '192.169.0.1', '100.63.255.255', '100.128.0.1', '169.253.255.255', '11.0.0.1'],
    ],
    ['public IPv6', ['2606:4700:4700::1111', '2a00:1450:4007:80f::200e', '2620:fe::fe', '[2606:4700::6810:85e5]']],
    ['IPv4-mapped IPv6 of public ones', ['::ffff:8.8.8.8', '::ffff:808:808']],
    ['NAT64 and 6to4 of public ones', ['64:ff9b::8.8.8.8', '2002:808:808::1']],
  ])('%s: allowed', (_what, addresses) => {
    for (const address of addresses) expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: true });
  });
});

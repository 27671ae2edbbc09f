import { parseJobEvent } from './job-events.service.js';

describe('parseJobEvent', () => {
  const id = '0190a2b4-7c3e-7d2a-9f10-123456789abc';

  it('reads the payloads the SQL writers send', () => {
    expect(parseJobEvent('n')).toEqual({ kind: 'new' });
    expect(parseJobEvent(`p:${id}:0.475`)).toEqual({ kind: 'progress', id, progress: 0.475 });
    expect(parseJobEvent(`s:${id}:cancelled`)).toEqual({ kind: 'status', id, status: 'cancelled' });
  });

  it('ignores anything else', () => {
    for (const payload of ['', 'x', `p:${id}`, `q:${id}:1`, 's::done']) expect(parseJobEvent(payload)).toBeNull();
  });
});

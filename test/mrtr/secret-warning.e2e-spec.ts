import { Logger } from '@nestjs/common';
import { startTestApp, type TestApp } from '../support/test-app.js';

// Without REQUEST_STATE_SECRET an instance signs requestState with a secret of its own and says so
// (README.md#configuration): once per process, however many apps the process boots (a test file boots
// dozens), and never when the secret is set.

const WARNING = /^REQUEST_STATE_SECRET is not set/;

describe('the REQUEST_STATE_SECRET warning', () => {
  const apps: TestApp[] = [];
  afterAll(() => Promise.all(apps.map((t) => t.close())));

  it('is logged once per process, not once per app', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      apps.push(await startTestApp({ REQUEST_STATE_SECRET: 'a-shared-request-state-secret-0123456789abcdef' }));
      const said = () => warn.mock.calls.filter(([message]) => typeof message === 'string' && WARNING.test(message)).length;
      expect(said()).toBe(0);
      apps.push(await startTestApp());
      expect(said()).toBe(1);
      apps.push(await startTestApp(), await startTestApp());
      expect(said()).toBe(1);
    } finally {
      warn.mockRestore();
    }
  });
});

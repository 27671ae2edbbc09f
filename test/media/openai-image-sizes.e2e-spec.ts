import { createDatabase, type TestDatabase } from '../support/database.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { configuredTenant } from '../support/fixtures.js';
import { callError, callOk } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

const RATIOS = ['1:1', '16:9', '4:3'] as const;

/** Per IMAGE_MODEL (and IMAGE_SIZES), the size asked for each aspect ratio generate_image accepts. */
const CASES: { name: string; env: Record<string, string>; sizes: Record<(typeof RATIOS)[number], string>; responseFormat: boolean }[] = [
  { name: 'gpt-image-1', env: { IMAGE_MODEL: 'gpt-image-1' }, sizes: { '1:1': '1024x1024', '16:9': '1536x1024', '4:3': '1536x1024' }, responseFormat: false },
  { name: 'dall-e-3', env: { IMAGE_MODEL: 'dall-e-3' }, sizes: { '1:1': '1024x1024', '16:9': '1792x1024', '4:3': '1792x1024' }, responseFormat: true },
  { name: 'dall-e-2', env: { IMAGE_MODEL: 'dall-e-2' }, sizes: { '1:1': '1024x1024', '16:9': '1024x1024', '4:3': '1024x1024' }, responseFormat: true },
  {
    name: 'another model with IMAGE_SIZES',
    env: { IMAGE_MODEL: 'sdxl-turbo', IMAGE_SIZES: '1024x1024, 1344x768, 1152x896, 768x1344' },
    sizes: { '1:1': '1024x1024', '16:9': '1344x768', '4:3': '1152x896' },
    responseFormat: true,
  },
];

/** generate_image through the OpenAI-compatible provider, against a fake that refuses what the real API refuses. */
describe('generate_image with IMAGE_PROVIDER=openai: a size the model accepts for each aspect ratio', () => {
  let db: TestDatabase;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ otherSizes: ['1024x1024', '1344x768', '1152x896', '768x1344'] });
    db = await createDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    await fake?.close();
  });

  const start = (env: Record<string, string>): Promise<TestApp> =>
    db.app({ SYNC_BUDGET_MS: '120000', IMAGE_PROVIDER: 'openai', IMAGE_BASE_URL: fake.url, IMAGE_API_KEY: 'sk-image', ...env });

  it.each(CASES)('$name', async ({ env, sizes, responseFormat }) => {
    const t = await start(env);
    try {
      const tenant = await configuredTenant(t);
      for (const aspect_ratio of RATIOS) {
        fake.seen.length = 0;
        const done = await callOk(t, tenant.key, 'generate_image', { prompt: 'a lighthouse at dusk', aspect_ratio });
        const [width, height] = sizes[aspect_ratio].split('x').map(Number);
        expect({ aspect_ratio, status: done.status, width: done.media.width, height: done.media.height }).toEqual({
          aspect_ratio,
          status: 'succeeded',
          width,
          height,
        });
        expect(fake.seen).toHaveLength(1);
        const sent = JSON.parse(fake.seen[0].body);
        expect(sent).toMatchObject({ model: env.IMAGE_MODEL, n: 1, size: sizes[aspect_ratio] });
        if (responseFormat) expect(sent.response_format).toBe('b64_json');
        else expect(sent).not.toHaveProperty('response_format');
      }
    } finally {
      await t.close();
    }
  });

  it('a size the server does not accept (IMAGE_SIZES wrong for it) is the provider’s 400, as a tool error naming it', async () => {
    const t = await start({ IMAGE_MODEL: 'sdxl-turbo', IMAGE_SIZES: '1024x768' });
    try {
      const tenant = await configuredTenant(t);
      const error = await callError(t, tenant.key, 'generate_image', { prompt: 'a lighthouse', aspect_ratio: '4:3' });
      expect(error.code).toBe('unprocessable');
      expect(error.message).toContain("Invalid value: '1024x768'. Supported values are: '1024x1024', '1344x768', '1152x896', '768x1344'.");
    } finally {
      await t.close();
    }
  });
});

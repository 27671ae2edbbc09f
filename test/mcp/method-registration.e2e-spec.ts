import { Injectable, Module } from '@nestjs/common';
import { createApp } from '../../src/app.factory.js';
import { loadConfig } from '../../src/config/config.js';
import { McpMethod, type MethodCall } from '../../src/protocol/mcp-method.js';
import type { MethodResult } from '../../src/protocol/method-result.js';
import { modern } from '../support/wire2026.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// Protocol methods are providers marked @McpMethod, found at boot in any module (docs/architecture.md#plug-ins-declared-one-way).

@Injectable()
class EchoMethods {
  @McpMethod('fixture/echo', { eras: ['legacy'] })
  echo({ params }: MethodCall): MethodResult {
    return { result: { echoed: params } };
  }

  @McpMethod('fixture/modern', { eras: ['modern'], advertises: { fixture: { on: true } } })
  async modernOnly(): Promise<MethodResult> {
    return { result: { served: 'modern' } };
  }
}

@Module({ providers: [EchoMethods] })
class EchoModule {}

@Injectable()
class SecondToolsList {
  @McpMethod('tools/list', { eras: ['legacy'] })
  list(): MethodResult {
    return { result: { tools: [] } };
  }
}

@Module({ providers: [SecondToolsList] })
class SecondToolsListModule {}

describe('@McpMethod registration', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, [EchoModule]);
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a module's marked method is served in the eras it names, and nowhere else", async () => {
    const legacy = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'fixture/echo', params: { n: 1 } });
    expect(legacy.body).toEqual({ jsonrpc: '2.0', id: 1, result: { echoed: { n: 1 } } });

    const notModern = await modern(t, tenant.key, 2, 'fixture/echo');
    expect(notModern.status).toBe(404);
    expect(notModern.body.error.code).toBe(-32601);

    const served = await modern(t, tenant.key, 3, 'fixture/modern');
    expect(served.status).toBe(200);
    expect(served.body.result).toMatchObject({ served: 'modern' });

    const notLegacy = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 4, method: 'fixture/modern' });
    expect(notLegacy.body.error).toEqual({ code: -32601, message: 'Method not found: fixture/modern' });
  });

  it('server/discover advertises what the modern methods declare, beside the product capabilities', async () => {
    const res = await modern(t, tenant.key, 5, 'server/discover');
    expect(res.body.result.capabilities).toEqual({
      tools: {},
      prompts: {},
      resources: {},
      completions: {},
      extensions: { 'io.modelcontextprotocol/tasks': {} },
      fixture: { on: true },
    });
  });

  it('two providers of one method in one era refuse the boot, naming the method', async () => {
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: process.env.DATABASE_URL, ADMIN_TOKEN: 'a-test-admin-token-123', LOG_LEVEL: 'silent' });
    const app = await createApp({ config, databaseUrl: config.databaseUrl!, adminToken: 'a-test-admin-token-123', extraModules: [SecondToolsListModule] });
    try {
      await expect(app.init()).rejects.toThrow('Two providers serve the MCP method "tools/list" in the legacy era');
    } finally {
      await app.close();
    }
  });
});

import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { MetricsService } from './metrics.service.js';

describe('MetricsService', () => {
  const made: MetricsService[] = [];
  const service = () => {
    const metrics = new MetricsService();
    made.push(metrics);
    return metrics;
  };
  afterEach(() => {
    for (const metrics of made.splice(0)) metrics.onApplicationShutdown();
    jest.restoreAllMocks();
  });

  it('counts requests by method, tool and outcome, folding values a client invents into "other"', async () => {
    const metrics = service();
    metrics.request({ method: 'tools/call', tool: 'list_projects', outcome: 'ok', status: 200, seconds: 0.002 });
    metrics.request({ method: 'tools/call', tool: 'x'.repeat(50), outcome: 'invalid', status: 200, seconds: 0.001 });
    for (let i = 0; i < 100; i++) metrics.request({ method: `made-up/${i}`, outcome: 'invalid', status: 200, seconds: 0.001 });
    metrics.request({ method: 'notifications/whatever', outcome: 'ok', status: 202, seconds: 0.001 });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^reblog_mcp_requests_total\{method="tools\/call",tool="list_projects",outcome="ok",status="200"\} 1$/m);
    expect(text).toMatch(/^reblog_mcp_requests_total\{method="tools\/call",tool="other",outcome="invalid",status="200"\} 1$/m);
    expect(text).toMatch(/^reblog_mcp_requests_total\{method="other",tool="",outcome="invalid",status="200"\} 100$/m);
    expect(text).toMatch(/^reblog_mcp_requests_total\{method="notifications\/other",tool="",outcome="ok",status="202"\} 1$/m);
    expect(text).toMatch(/^reblog_mcp_request_duration_seconds_count\{method="tools\/call",outcome="ok"\} 1$/m);
    expect(text).not.toMatch(/made-up/);
  });

  it('keeps one registry per instance (several apps in one process)', async () => {
    const a = service();
    const b = service();
    a.rateLimitRefusals.inc(3);
    expect(await a.registry.metrics()).toMatch(/^reblog_rate_limit_refusals_total 3$/m);
    expect(await b.registry.metrics()).toMatch(/^reblog_rate_limit_refusals_total 0$/m);
  });

  it("stops the default metrics' GC observer and event-loop histogram on shutdown (Node would keep them, and all they reach)", async () => {
    const probe = monitorEventLoopDelay();
    const disable = jest.spyOn(Object.getPrototypeOf(probe) as { disable(): boolean }, 'disable');
    const disconnect = jest.spyOn(PerformanceObserver.prototype, 'disconnect');
    const metrics = new MetricsService();
    expect(await metrics.registry.metrics()).toMatch(/^# TYPE reblog_nodejs_gc_duration_seconds histogram$/m);
    expect(await metrics.registry.metrics()).toMatch(/^reblog_nodejs_eventloop_lag_p99_seconds /m);
    metrics.onApplicationShutdown();
    expect(disable).toHaveBeenCalledTimes(1);
    expect(disconnect).toHaveBeenCalledTimes(1);
  });
});

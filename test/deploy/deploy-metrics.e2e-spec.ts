import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestApp, type TestApp } from '../support/test-app.js';

const DEPLOY = join(__dirname, '..', '..', 'deploy');

/** Every PromQL expression of the alert rules and of the dashboard's panels. */
function expressions(): { where: string; expr: string }[] {
  const rules = parse(readFileSync(join(DEPLOY, 'prometheus-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  return [
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
    ...dashboard.panels.flatMap((p) => p.targets.map((target) => ({ where: `panel "${p.title}"`, expr: target.expr }))),
  ];
}

/** The metric families /metrics declares (`# TYPE name type`). */
function families(exposition: string): Map<string, string> {
  return new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/** Whether `name` is a series of a declared family: the family itself, or a histogram's or summary's `_bucket`, `_sum`, `_count`. */
function exposed(name: string, declared: Map<string, string>): boolean {
  if (declared.has(name)) return true;
  const m = /^(.+)_(bucket|sum|count)$/.exec(name);
  if (!m) return false;
  const type = declared.get(m[1]);
  return type === 'histogram' || (type === 'summary' && m[2] !== 'bucket');
}

describe('deploy/: Prometheus alert rules and Grafana dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('name only metrics that a running app exposes on /metrics', async () => {
    const res = await t.http.get('/metrics').expect(200);
    const declared = families(res.text);
    const exprs = expressions();
    expect(exprs.length).toBeGreaterThan(10);

    const missing: string[] = [];
    for (const { where, expr } of exprs) {
      const names = [...expr.matchAll(/\breblog_[a-z0-9_]+/g)].map((m) => m[0]);
      // Each expression watches at least one of the app's metrics; none names another exporter's.
      expect({ where, names: names.length > 0 }).toEqual({ where, names: true });
      for (const name of names) if (!exposed(name, declared)) missing.push(`${where}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('tells a missing metric from an exposed one (the check itself)', () => {
    const declared = new Map([
      ['reblog_h', 'histogram'],
      ['reblog_c', 'counter'],
    ]);
    expect(['reblog_h_bucket', 'reblog_h_sum', 'reblog_h_count', 'reblog_c'].every((n) => exposed(n, declared))).toBe(true);
    expect(['reblog_c_bucket', 'reblog_x', 'reblog_h_total'].some((n) => exposed(n, declared))).toBe(false);
  });
});

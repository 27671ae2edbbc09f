import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

// A real browser for the tests of the server's pages: Debian's Chromium, driven by playwright-core
// (no browser download). CI installs it (.ci/run). Elsewhere, without it, jest.config.cjs leaves the
// browser suites out of the run with a sentence saying why, except under CI=true: CI must never pass
// without the browser.

/** Debian's Chromium (`apt-get install chromium`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The command line the browser tests run Chromium with (README.md#running-the-tests). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
] as const;

/** Where screenshots and other browser artifacts are kept (git-ignored; CI may upload the folder). */
export const ARTIFACTS_DIR = resolve(__dirname, '..', '..', 'test-artifacts');

const onCi = process.env.CI === 'true';

/** Why Chromium cannot run here (a sentence), or null when it can. */
export function chromiumMissing(): string | null {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return null;
  } catch {
    return `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium; .ci/run does)`;
  }
}

/**
 * `describe` for a suite that drives Chromium. Without Chromium (a run that reaches it anyway: CI=true,
 * or a new browser suite jest.config.cjs does not know) it is one failing test saying why, nothing started.
 */
export function describeWithChromium(name: string, fn: () => void): void {
  const missing = chromiumMissing();
  if (!missing) return describe(name, fn);
  describe(name, () => {
    it('has Chromium', () => {
      throw new Error(`${missing}.${onCi ? ' CI=true: browser tests never skip.' : ''}`);
    });
  });
}

/**
 * Launches Debian's Chromium headless with exactly {@link CHROMIUM_FLAGS}: Playwright's own default
 * switches are left out (`ignoreDefaultArgs`), and only what it needs to drive the browser is added:
 * the DevTools pipe, a fresh profile folder (removed by `close()`), no startup window.
 * Debian's launcher script still adds the flags of /etc/chromium.d.
 */
export async function launchChromium(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(`${missing}.${onCi ? ' CI=true: browser tests never skip.' : ''}`);
  const profile = mkdtempSync(join(tmpdir(), 'reblog-chromium-'));
  try {
    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      ignoreDefaultArgs: true,
      args: [...CHROMIUM_FLAGS, '--remote-debugging-pipe', `--user-data-dir=${profile}`, '--no-startup-window'],
      timeout: 60_000,
    });
    // close() resolves once Chromium has exited; only then is its profile folder free to remove.
    const close = browser.close.bind(browser);
    browser.close = async (options) => {
      await close(options);
      await rm(profile, { recursive: true, force: true, maxRetries: 5 });
    };
    return browser;
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

/** Keeps a full-page screenshot as a test artifact: `test-artifacts/<name>.png`. Answers its path. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A loopback HTTP server standing for an OAuth client's redirect URI (RFC 8252 §7.3). */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core run in the page: no serious or critical violation. The console's CSP (`script-src 'self'`)
 * refuses an inline <script> (page.addScriptTag({content})), so the source is evaluated through
 * DevTools, which CSP does not govern. `label` names the page in a failure.
 */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const { passes, violations } = await page.evaluate(async () => {
    // Runs in the page: its globals, not Node's (the test's tsconfig has no DOM types).
    const inPage = globalThis as unknown as {
      axe: { run(ctx: unknown): Promise<{ passes: unknown[]; violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      document: unknown;
    };
    const result = await inPage.axe.run(inPage.document);
    return {
      passes: result.passes.length,
      violations: result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })),
    };
  });
  // axe did run its rules (a pass that checked nothing would find nothing too).
  expect(passes).toBeGreaterThan(10);
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect([label, grave]).toEqual([label, []]);
}

/** Screenshots `<name>-1280` and `<name>-360` (the page at those widths), each followed by the axe pass; leaves the page at 1280. */
export async function screenshotAndCheck(page: Page, name: string): Promise<void> {
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: width === 1280 ? 800 : 740 });
    await keepScreenshot(page, `${name}-${width}`);
    await expectAccessible(page, `${name} at ${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

export interface CallbackServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Every request it received, in order (the browser's favicon requests left out). */
  hits: URL[];
  /** The first request to `path` (already received, or when it comes): its full URL, query included. */
  next(path: string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * Starts a {@link CallbackServer} on a free loopback port. It answers every request with a small
 * page, as a native app's redirect listener does once it has the code.
 */
export async function startCallbackServer(): Promise<CallbackServer> {
  const hits: URL[] = [];
  const waiting: { path: string; resolve: (url: URL) => void }[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/favicon.ico') {
      const full = new URL(url.pathname + url.search, origin);
      hits.push(full);
      for (const w of waiting.splice(0)) {
        if (w.path === full.pathname) w.resolve(full);
        else waiting.push(w);
      }
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end('<!doctype html><title>Signed in</title><p>You can close this window.</p>');
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    next: (path) => {
      const seen = hits.find((h) => h.pathname === path);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiting.push({ path, resolve }));
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

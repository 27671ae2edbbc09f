import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The MCP hosts people install (Claude Code, Gemini CLI, Codex), run from this project's
 * node_modules as separate processes: each in a HOME of its own, with an environment that holds
 * nothing of the test run's (no proxy, no API key, no config), and a hard time limit after which
 * its whole process group is killed.
 */

const ROOT = resolve(__dirname, '..', '..');
/** Where npm links the hosts' executables (`claude`, `gemini`, `codex`). */
export const BIN = join(ROOT, 'node_modules', '.bin');

/** The version of an installed package (a host, as package.json pins it). */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Every process group started here and not yet ended: {@link killHosts} ends them. */
const running = new Set<ChildProcess>();
const homes: string[] = [];

/** A new empty folder to be a host's HOME (removed by {@link killHosts}). */
export function isolatedHome(name: string): string {
  const home = mkdtempSync(join(tmpdir(), `reblog-host-${name}-`));
  homes.push(home);
  return home;
}

/**
 * A host's environment: `HOME`, a `PATH` of the installed hosts, the Node.js that runs the tests
 * (their `#!/usr/bin/env node` scripts run under it) and the system's, and `extra`. Loopback is
 * never proxied.
 */
export function hostEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    PATH: [BIN, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    NO_PROXY: '127.0.0.1,localhost',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...extra,
  };
}

/** How a host's run ended, and what it printed. */
export interface HostRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether it was killed for running past its time limit. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

interface HostOptions {
  env: Record<string, string>;
  cwd: string;
  /** After this long the process group is killed (SIGKILL). */
  timeoutMs?: number;
  /** Once what it printed on stdout satisfies this, the process group is killed and the run ends (not timed out). */
  until?: (stdout: string) => boolean;
}

/** Spawns `file` in a process group of its own (so a host's children die with it), tracked for {@link killHosts}. */
function spawnHost(file: string, args: string[], { env, cwd }: HostOptions): ChildProcess {
  const child = spawn(file, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('close', () => running.delete(child));
  return child;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Runs a host command to its end (or `until`, or its time limit), with nothing on its standard input. */
export function runHost(file: string, args: string[], options: HostOptions): Promise<HostRun> {
  const child = spawnHost(file, args, options);
  child.stdin!.end();
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!ended && options.until?.(stdout)) {
      ended = true;
      killGroup(child);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, options.timeoutMs ?? 45_000);
  return new Promise((done, fail) => {
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, timedOut, stdout, stderr });
    });
  });
}

/** What a run printed, for a failing assertion's message. */
export function describeRun(run: HostRun): string {
  return `exit ${run.code ?? run.signal}${run.timedOut ? ' (killed: time limit)' : ''}\n--- stdout\n${run.stdout.slice(-3000)}\n--- stderr\n${run.stderr.slice(-3000)}`;
}

/**
 * A host that speaks JSON-RPC as one JSON object a line on its standard input and output: Codex's
 * app-server, Gemini CLI's ACP mode. Requests the host sends back are answered with an error;
 * notifications are kept in {@link notifications}.
 */
export class StdioRpc {
  readonly notifications: { method: string; params: any }[] = [];
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, { done(message: any): void; fail(err: Error): void }>();
  private nextId = 1;
  private stderr = '';
  private ended: string | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    file: string,
    args: string[],
    options: HostOptions,
    /** `"jsonrpc": "2.0"` on each message (ACP); Codex's app-server leaves it out. */
    private readonly jsonrpc = false,
  ) {
    this.child = spawnHost(file, args, options);
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-6000)));
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.receive(line));
    this.child.once('close', (code, signal) => this.end(`exited (${code ?? signal})`));
    this.child.once('error', (err) => this.end(`could not start: ${err.message}`));
    this.timer = setTimeout(() => {
      this.end(`was killed after ${options.timeoutMs ?? 60_000} ms`);
      killGroup(this.child);
    }, options.timeoutMs ?? 60_000);
  }

  /** Sends a request; its `result`, or a failure with its `error` (or with the host's end). */
  request(method: string, params: unknown): Promise<any> {
    if (this.ended) return Promise.reject(this.failure(method));
    const id = this.nextId++;
    this.write({ id, method, params });
    return new Promise((done, fail) => {
      this.pending.set(id, {
        done: (message) => (message.error ? fail(new Error(`${method} answered an error: ${JSON.stringify(message.error)}`)) : done(message.result)),
        fail,
      });
    });
  }

  notify(method: string, params?: unknown): void {
    this.write({ method, ...(params === undefined ? {} : { params }) });
  }

  /** Kills the host (its whole process group) and waits for it to end. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const closed = new Promise((done) => this.child.once('close', done));
      killGroup(this.child);
      await closed;
    }
  }

  private write(message: object): void {
    this.child.stdin!.write(JSON.stringify(this.jsonrpc ? { jsonrpc: '2.0', ...message } : message) + '\n');
  }

  private receive(line: string): void {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return; // a host's stray log line
    }
    if (message.method !== undefined && message.id !== undefined) {
      this.write({ id: message.id, error: { code: -32601, message: 'The test does not answer host requests.' } });
    } else if (message.method !== undefined) {
      this.notifications.push({ method: message.method, params: message.params });
    } else if (this.pending.has(message.id)) {
      this.pending.get(message.id)!.done(message);
      this.pending.delete(message.id);
    }
  }

  private end(how: string): void {
    if (this.ended) return;
    this.ended = how;
    clearTimeout(this.timer);
    for (const [, { fail }] of this.pending) fail(this.failure('a request'));
    this.pending.clear();
  }

  private failure(what: string): Error {
    return new Error(`The host ${this.ended} before answering ${what}; its stderr:\n${this.stderr}`);
  }
}

/** Kills every host process group still running and removes the HOMEs. */
export async function killHosts(): Promise<void> {
  await Promise.all(
    [...running].map((child) => {
      const closed = new Promise((done) => child.once('close', done));
      killGroup(child);
      return closed;
    }),
  );
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
}

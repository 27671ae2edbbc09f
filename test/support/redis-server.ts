import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/common/net.js';

/** A real `redis-server` on a free loopback port, in memory only. */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Starts it again on the same port (after stop), empty. */
  restart(): Promise<void>;
}

/**
 * Starts Debian's `redis-server` (CI installs it: see .ci/run). Missing, it fails the test with a
 * clear message instead of skipping: the multi-instance guarantees are not tested without it.
 */
export async function startRedis(): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server is not installed: these tests need a real Redis. Install it (apt-get install -y redis-server; .ci/run does) and run again.');
  }
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((ready, fail) => {
      let out = '';
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) ready();
      };
      child!.stdout!.on('data', onData);
      child!.once('exit', (code) => fail(new Error(`redis-server exited with code ${code}:\n${out.slice(-2000)}`)));
    });
  };
  const stop = async () => {
    const c = child as ChildProcess | null;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((done) => c.once('exit', done));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, stop, restart: start };
}

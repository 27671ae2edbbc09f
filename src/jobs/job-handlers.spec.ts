import { Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { JobHandler, JobHandlers, type JobEffect } from './job-handlers.js';

@Injectable()
@JobHandler('write_article')
class Writer implements JobHandler {
  prepare(): Promise<JobEffect> {
    return Promise.resolve(() => Promise.resolve({}));
  }
}

@Injectable()
@JobHandler('write_article')
class AnotherWriter extends Writer {}

@Injectable()
@JobHandler('generate_image')
class Painter extends Writer {}

function boot(...handlers: (typeof Writer)[]) {
  @Module({ imports: [DiscoveryModule], providers: [JobHandlers, ...handlers] })
  class Handlers {}
  return NestFactory.createApplicationContext(Handlers, { logger: false, abortOnError: false });
}

describe('JobHandlers', () => {
  it('finds the providers marked @JobHandler, by kind', async () => {
    const app = await boot(Writer, Painter);
    const handlers = app.get(JobHandlers);
    expect(handlers.kinds().sort()).toEqual(['generate_image', 'write_article']);
    expect(handlers.get('write_article')).toBe(app.get(Writer));
    expect(handlers.get('publish_article')).toBeUndefined();
    await app.close();
  });

  it('refuses to boot with two handlers of one kind', async () => {
    await expect(boot(Writer, AnotherWriter)).rejects.toThrow('Two job handlers for "write_article".');
  });
});

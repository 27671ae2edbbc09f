// The floor: a bare NestJS controller with one guard and one pipe answering the MCP echo over the same
// HTTP as our server (POST /mcp, JSON in, JSON out) — what any Nest app pays before doing anything of
// its own. No sessions, no activity log, no rate limit, no logging: the guard compares the bearer token,
// the pipe checks the JSON-RPC envelope, the handler answers `tools/call` with the conformance suite's
// simple text and `tools/list` with the catalogue our server lists (read from BENCH_BODY_FILE, parsed
// once and serialised by Nest per answer, as a controller returning an object is).
//   BENCH_TOKEN=<bearer> BENCH_BODY_FILE=<our tools/list answer> node bench/servers/nest-floor.mjs
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { BadRequestException, Body, Controller, HttpCode, Injectable, Module, Post, UnauthorizedException, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const TOKEN = `Bearer ${process.env.BENCH_TOKEN}`;
const LISTED = JSON.parse(readFileSync(process.env.BENCH_BODY_FILE, 'utf8')).result;
const ECHO = { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] };

class BearerGuard {
  canActivate(context) {
    if (context.switchToHttp().getRequest().headers.authorization !== TOKEN) throw new UnauthorizedException();
    return true;
  }
}
Injectable()(BearerGuard);

class EnvelopePipe {
  transform(value) {
    if (!value || typeof value !== 'object' || value.jsonrpc !== '2.0' || typeof value.method !== 'string') throw new BadRequestException('Invalid request');
    return value;
  }
}
Injectable()(EnvelopePipe);

class McpController {
  post(message) {
    const result = message.method === 'tools/list' ? LISTED : message.method === 'tools/call' ? ECHO : {};
    return { jsonrpc: '2.0', id: message.id, result };
  }
}
const post = Object.getOwnPropertyDescriptor(McpController.prototype, 'post');
Body(new EnvelopePipe())(McpController.prototype, 'post', 0);
HttpCode(200)(McpController.prototype, 'post', post);
Post()(McpController.prototype, 'post', post);
UseGuards(BearerGuard)(McpController);
Controller('mcp')(McpController);

class FloorModule {}
Module({ controllers: [McpController], providers: [BearerGuard] })(FloorModule);

const app = await NestFactory.create(FloorModule, { logger: false });
await app.listen(0, '127.0.0.1');
console.log(`listening ${app.getHttpServer().address().port}`);
process.on('SIGTERM', () => {
  app.getHttpServer().closeAllConnections();
  app.close().then(() => process.exit(0));
});

import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AdminModule } from './admin/admin.module.js';
import { ADMIN_TOKEN } from './admin/admin-token.js';
import { redactingLogOptions } from './common/log-redaction.js';
import { requestIdLogMixin } from './common/request-id.js';
import type { AppConfig } from './config/config.js';
import { CompletionsModule } from './completions/completions.module.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DemoModule } from './demo/demo.module.js';
import { HealthModule } from './health/health.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { PromptsModule } from './prompts/prompts.module.js';
import { ResourcesModule } from './resources/resources.module.js';
import { RetentionModule } from './retention/retention.module.js';
import { TasksModule } from './tasks/tasks.module.js';
import { SignInModule } from './sign-in/sign-in.module.js';
import { ToolsModule } from './tools/tools.module.js';
import { UsersModule } from './users/users.module.js';
import { WebModule } from './web/web.module.js';

export interface AppOptions {
  config: AppConfig;
  databaseUrl: string;
  adminToken: string;
  /** Modules added to the app, such as a test entry point's fixture tools (found by discovery like any provider). */
  extraModules?: (Type | DynamicModule)[];
}

@Module({})
export class AppModule {
  static forRoot({ config, databaseUrl, adminToken, extraModules = [] }: AppOptions): DynamicModule {
    const pretty = !config.production && process.stdout.isTTY;
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            // Requests are counted in metrics and the activity log; per-request log lines would cost more than they tell.
            autoLogging: false,
            ...redactingLogOptions,
            // The request id on every line, /mcp's too (excluded below from pino-http's per-request logger, which costs more than it tells).
            mixin: requestIdLogMixin,
            ...(pretty ? { transport: { target: 'pino-pretty', options: { singleLine: true } } } : {}),
          },
          exclude: ['mcp'],
        }),
        DatabaseModule.forRoot(databaseUrl),
        // First of the edges: Express tries routes in the order modules are listed, and /mcp takes nearly
        // every request; behind the admin API it was matched against some forty paths first.
        McpModule,
        HealthModule,
        MetricsModule,
        RetentionModule,
        AdminModule,
        ResourcesModule,
        PromptsModule,
        CompletionsModule,
        TasksModule,
        OAuthModule,
        ToolsModule,
        UsersModule,
        WebModule,
        SignInModule,
        ConsoleModule,
        DemoModule,
        ...extraModules,
      ],
      providers: [{ provide: ADMIN_TOKEN, useValue: adminToken }],
      exports: [ADMIN_TOKEN],
      global: true,
    };
  }
}

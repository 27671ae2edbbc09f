import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { UsersModule } from '../users/users.module.js';
import { LoginLinksRepository } from './login-links.repository.js';
import { LoginLinksService } from './login-links.service.js';

/** Single-use login links: made by the admin API, `npm run login-link` and the demo seed; consumed by the sign-in form. */
@Module({
  imports: [UsersModule, AuditModule],
  providers: [LoginLinksService, LoginLinksRepository],
  exports: [LoginLinksService],
})
export class LoginLinksModule {}

import { Module } from '@nestjs/common';
import { MembersRepository } from './members.repository.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

// The repositories are exported for the services that write people in their own transactions: an
// account is created with its owner member (accounts), memberships change under a lock (people).
@Module({
  providers: [UsersService, UsersRepository, MembersRepository],
  exports: [UsersService, UsersRepository, MembersRepository],
})
export class UsersModule {}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { ROLES, type ProjectRole } from '../common/tool-names.js';
import { IsPersonEmail } from '../users/email.js';
import type { AccountRole } from '../users/user.js';

const ACCOUNT_ROLES: readonly AccountRole[] = ['owner', 'member'];

export class CreateUserDto {
  @ApiProperty({ example: 'ada@acme.test', description: 'Unique whatever its case; stored lower-case.' }) @IsPersonEmail() email: string;
  @ApiPropertyOptional({ example: 'Ada Lovelace' }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
}

export class UsersQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Only the user with this email (any case).' }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(320) email?: string;
}

export class UpdateUserDto {
  @ApiPropertyOptional({ nullable: true, description: 'null clears the name.' }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) name?: string | null;
  @ApiPropertyOptional({ description: 'true: every grant of this user is refused (401) from its next request; false: they work again.' })
  @IsOptional()
  @IsBoolean()
  disabled?: boolean;
}

export class AccountMemberDto {
  @ApiProperty({ enum: ACCOUNT_ROLES }) @IsIn(ACCOUNT_ROLES) role: AccountRole;
}

export class ProjectMemberDto {
  @ApiProperty({ enum: ROLES }) @IsIn(ROLES) role: ProjectRole;
}

import { AUDIT_ACTIONS } from '../audit/audit.service.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
  Max,
  ValidateNested,
} from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { ROLES, SCOPES, TOOL_NAMES, type ProjectRole, type Scope } from '../common/tool-names.js';
import { JOB_STATUSES } from '../jobs/job.entity.js';
import { OUTCOMES } from '../activity/activity-entry.entity.js';

export class CreateAccountDto {
  @ApiProperty({ example: 'Acme Publishing' }) @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @ApiProperty({ example: 'owner@acme.test' }) @IsEmail() @MaxLength(320) owner_email: string;
}

export class CreateProjectDto {
  @ApiProperty({ example: 'Engineering blog' }) @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @ApiPropertyOptional({ enum: TOOL_NAMES, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TOOL_NAMES.length)
  @IsString({ each: true })
  disabled_tools?: string[];
}

export class UpdateProjectDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ enum: TOOL_NAMES, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TOOL_NAMES.length)
  @IsString({ each: true })
  disabled_tools?: string[];
}

export class ProjectRoleDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() project_id: string;
  @ApiProperty({ enum: ROLES }) @IsIn(ROLES) role: ProjectRole;
}

class CredentialBaseDto {
  @ApiProperty({ enum: SCOPES, isArray: true })
  @IsArray()
  @ArrayUnique()
  @ArrayMaxSize(SCOPES.length)
  @IsIn(SCOPES, { each: true })
  scopes: Scope[];

  @ApiProperty({ type: [ProjectRoleDto] })
  @IsArray()
  @ArrayMaxSize(10_000)
  @ValidateNested({ each: true })
  @Type(() => ProjectRoleDto)
  projects: ProjectRoleDto[];
}

export class CreateApiKeyDto extends CredentialBaseDto {
  @ApiProperty({ example: 'CI publisher' }) @IsString() @IsNotEmpty() @MaxLength(200) name: string;
}

export class CreateGrantDto extends CredentialBaseDto {
  @ApiProperty({ example: 'Claude' }) @IsString() @IsNotEmpty() @MaxLength(200) client_name: string;
  @ApiPropertyOptional({ description: 'Lifetime in seconds (1 or more); no expiry when absent.', minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10 * 365 * 24 * 3600)
  expires_in?: number;
}

export class ActivityQuery extends PageQuery {
  @ApiPropertyOptional({ enum: OUTCOMES }) @IsOptional() @IsIn(OUTCOMES) outcome?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() credential_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) method?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) tool?: string;
  @ApiPropertyOptional({ description: 'The client name as it introduced itself, exactly.' }) @IsOptional() @IsString() @MaxLength(200) client_name?: string;
  // The times' form (ISO 8601 with an offset, a real date) is ActivityReportsService's rule, for every caller.
  @ApiPropertyOptional({ format: 'date-time', description: 'Entries at or after this time.' }) @IsOptional() @IsString() @MaxLength(40) from?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Entries before this time.' }) @IsOptional() @IsString() @MaxLength(40) to?: string;
}

export class JobsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES }) @IsOptional() @IsIn(JOB_STATUSES) status?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() project_id?: string;
}

export class AuditQueryDto extends PageQuery {
  @ApiPropertyOptional({ description: '`operator`, a user id or email, or an OAuth client id.' }) @IsOptional() @IsString() @MaxLength(320) actor?: string;
  @ApiPropertyOptional({ enum: AUDIT_ACTIONS }) @IsOptional() @IsIn(AUDIT_ACTIONS) action?: string;
  // The times' form (ISO 8601 with an offset, a real date) is AuditService's rule, for every caller.
  @ApiPropertyOptional({ format: 'date-time', description: 'Events at or after this time.' }) @IsOptional() @IsString() @MaxLength(40) from?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Events before this time.' }) @IsOptional() @IsString() @MaxLength(40) to?: string;
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PERSON_CLAIMS, UNKNOWN_PEOPLE, type PersonClaim, type UnknownPeople } from '../identity-providers/identity-provider.js';

export class CreateIdentityProviderDto {
  @ApiProperty({ example: 'https://acme.okta.com', description: "The provider's issuer, exactly as its discovery document and its tokens say it." })
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  issuer: string;

  @ApiPropertyOptional({
    enum: PERSON_CLAIMS,
    default: 'email',
    description: 'email: the person with the email claim; sub: the person bound to the issuer and subject.',
  })
  @IsOptional()
  @IsIn(PERSON_CLAIMS)
  person_claim?: PersonClaim;

  @ApiPropertyOptional({
    enum: UNKNOWN_PEOPLE,
    default: 'refuse',
    description: 'add: a person the account does not have yet is added as a member with no project role.',
  })
  @IsOptional()
  @IsIn(UNKNOWN_PEOPLE)
  unknown_people?: UnknownPeople;

  @ApiPropertyOptional({ nullable: true, description: 'For sign-in with this provider: the client id it gave this server.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  oidc_client_id?: string | null;

  @ApiPropertyOptional({ nullable: true, writeOnly: true, description: 'For sign-in with this provider: its client secret. Never answered.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  oidc_client_secret?: string | null;
}

export class UpdateIdentityProviderDto {
  @ApiPropertyOptional({ description: 'A new issuer is discovered again.' }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(2000) issuer?: string;
  @ApiPropertyOptional({ enum: PERSON_CLAIMS }) @IsOptional() @IsIn(PERSON_CLAIMS) person_claim?: PersonClaim;
  @ApiPropertyOptional({ enum: UNKNOWN_PEOPLE }) @IsOptional() @IsIn(UNKNOWN_PEOPLE) unknown_people?: UnknownPeople;
  @ApiPropertyOptional({ nullable: true, description: 'null clears it.' }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(500) oidc_client_id?:
    string | null;
  @ApiPropertyOptional({ nullable: true, writeOnly: true, description: 'Replaced when sent, kept when left out; null clears it.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  oidc_client_secret?: string | null;
}

import { applyDecorators } from '@nestjs/common';
import { IsEmail, isEmail, MaxLength } from 'class-validator';

/** The longest email a person may have (RFC 5321's path limit, rounded as the admin API documents it). */
export const EMAIL_MAX_LENGTH = 320;

/** A person's email as every edge accepts it: an address of at most {@link EMAIL_MAX_LENGTH} characters. */
export function isPersonEmail(value: unknown): boolean {
  return typeof value === 'string' && value.length <= EMAIL_MAX_LENGTH && isEmail(value);
}

/** The same rule as a class-validator decorator, for the admin API's DTOs. */
export function IsPersonEmail(): PropertyDecorator {
  return applyDecorators(IsEmail(), MaxLength(EMAIL_MAX_LENGTH));
}

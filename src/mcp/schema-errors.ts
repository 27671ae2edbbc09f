import type { ErrorObject } from 'ajv';

/** Patterns of the tool schemas, said in words. */
const PATTERN_RULES: Record<string, string> = {
  '^[a-z0-9]+(?:-[a-z0-9]+)*$': 'be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post")',
};

/** Formats of the tool schemas, said in words. */
const FORMAT_RULES: Record<string, string> = {
  'date-time': 'an ISO-8601 date-time with a time zone, such as "2026-01-31T09:00:00Z"',
};

/** A sentence naming the argument and what is allowed, for a model to correct its call. */
export function describeSchemaError(error: ErrorObject | undefined): string {
  if (!error) return 'Invalid arguments.';
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const p = error.params as Record<string, unknown>;
  const name = (path || (p.missingProperty as string) || (p.additionalProperty as string) || 'arguments') as string;
  switch (error.keyword) {
    case 'required':
      return `Missing required argument "${p.missingProperty as string}".`;
    case 'additionalProperties': {
      if (!path) return `Unexpected argument "${p.additionalProperty as string}": this tool does not take it.`;
      const allowed = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `Unknown key "${p.additionalProperty as string}" in "${path}"${allowed.length ? `: allowed keys are ${allowed.join(', ')}` : ''}.`;
    }
    case 'minProperties':
      return `Invalid value for "${name}": give at least ${p.limit as number} ${p.limit === 1 ? 'key' : 'keys'}.`;
    case 'type':
      return `Invalid value for "${name}": expected ${p.type === 'integer' ? 'an integer' : `a ${p.type as string}`}.`;
    case 'enum':
      return `Invalid value for "${name}": must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `Invalid value for "${name}": must be ${p.comparison as string} ${p.limit as number}.`;
    case 'minLength':
      return p.limit === 1
        ? `Invalid value for "${name}": must not be empty.`
        : `Invalid value for "${name}": must be at least ${p.limit as number} characters long.`;
    case 'maxLength':
      return `Invalid value for "${name}": must be at most ${p.limit as number} characters long.`;
    case 'maxItems':
      return `Invalid value for "${name}": at most ${p.limit as number} items.`;
    case 'minItems':
      return `Invalid value for "${name}": at least ${p.limit as number} items.`;
    case 'pattern':
      return `Invalid value for "${name}": must ${PATTERN_RULES[p.pattern as string] ?? `match ${p.pattern as string}`}.`;
    case 'format':
      return `Invalid value for "${name}": must be ${FORMAT_RULES[p.format as string] ?? `a valid ${p.format as string}`}.`;
    case 'oneOf':
    case 'anyOf':
    case 'not':
      return `Invalid arguments: ${error.message ?? 'they do not match the schema'}${path ? ` (at "${path}")` : ''}.`;
    default:
      return `Invalid value for "${name}": ${error.message ?? 'does not match the schema'}.`;
  }
}

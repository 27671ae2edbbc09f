import { JOB_STATUSES } from '../jobs/job.entity.js';

/** JSON Schemas of job results, shared by the job tools' `outputSchema` (nullable fields as `anyOf` with `null`, as in article.schemas.ts). */
const nullableDate = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] };

export const JOB_SCHEMA = {
  type: 'object' as const,
  properties: {
    id: { type: 'string' },
    tool: { type: 'string' },
    project_id: { type: 'string' },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    result: { type: 'object', description: 'What the tool answered (succeeded jobs).' },
    error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] },
    created_at: { type: 'string', format: 'date-time' },
    started_at: nullableDate,
    finished_at: nullableDate,
  },
  required: ['id', 'tool', 'project_id', 'status', 'progress', 'created_at', 'started_at', 'finished_at'],
};

export const AGENT_CONFIG_SCHEMA = {
  type: 'object' as const,
  properties: {
    agent: { type: 'string', enum: ['writer'] },
    config: {
      anyOf: [
        {
          type: 'object',
          properties: {
            version: { type: 'integer', minimum: 1 },
            answers: { type: 'object', additionalProperties: { type: 'string' } },
            created_at: { type: 'string', format: 'date-time' },
          },
          required: ['version', 'answers', 'created_at'],
        },
        { type: 'null' },
      ],
    },
  },
  required: ['agent', 'config'],
};

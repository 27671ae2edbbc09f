import { Injectable } from '@nestjs/common';
import type { ReachableProject } from '../auth/principal.js';
import { McpPrompt, type McpPromptHandler, type PromptContext, type PromptResult } from './mcp-prompt.decorator.js';
import { listsProjectId } from '../protocol/tool-access.js';
import { projectLabel, projectList, textMessage, unknownProject } from './prompt-text.js';

@McpPrompt({
  name: 'draft_article',
  title: 'Draft an article',
  description: 'Draft a new blog article on a topic, for an audience, as a draft in one of your projects (with the AI writer when the project allows it).',
  arguments: [
    { name: 'topic', description: 'What the article is about, and anything it must say.', required: true, maxLength: 4000, complete: 'tag' },
    { name: 'audience', description: "Who it is for; the project's writer setup decides when absent.", maxLength: 500 },
    { name: 'project_id', description: 'Id of the project to draft in (see list_projects); needed when you can draft in several.', complete: 'project_id' },
  ],
  needs: ['write_article', 'create_article'],
})
@Injectable()
export class DraftArticlePrompt implements McpPromptHandler {
  get(args: Readonly<Record<string, string>>, ctx: PromptContext): PromptResult {
    const writer = ctx.allowedProjects('write_article');
    const creator = ctx.allowedProjects('create_article');
    const drafting = [...new Map([...writer, ...creator].map((p) => [p.id, p])).values()];
    let project: ReachableProject | undefined;
    if (args.project_id !== undefined) {
      project = drafting.find((p) => p.id === args.project_id);
      if (!project) throw unknownProject('project_id', args.project_id);
    } else if (drafting.length === 1) {
      project = drafting[0];
    }

    const lines = [`Draft a blog article about: ${args.topic}`];
    lines.push(args.audience ? `Audience: ${args.audience}` : "Audience: not given; follow the project's writer setup, or ask the user.");
    // project_id is said only where the catalogue lists it: with one reachable project it is inferred.
    const listed = listsProjectId(ctx.principal);
    if (!project) {
      lines.push('', `First ask the user which project to draft in: ${projectList(drafting)}. Use its id as project_id below.`);
    } else {
      lines.push(`Project: ${listed ? projectLabel(project) : `"${project.name}"`}.`);
    }
    const where = !project ? 'the chosen project_id' : listed ? `project_id "${project.id}"` : '';
    const canWrite = (p: ReachableProject | undefined) => (p ? writer.some((w) => w.id === p.id) : writer.length > 0);
    const canCreate = (p: ReachableProject | undefined) => (p ? creator.some((c) => c.id === p.id) : creator.length > 0);
    const configurer = ctx.allowedProjects('configure_agent');
    const canConfigure = (p: ReachableProject | undefined) => (p ? configurer.some((c) => c.id === p.id) : configurer.length > 0);
    lines.push('');
    if (canWrite(project)) {
      lines.push(
        `1. Call write_article with ${where ? `${where} and ` : ''}a brief made of the topic${args.audience ? ' and the audience' : ''} (add a title only if the user gave one). It writes a draft with the project's AI writer.`,
        canConfigure(project)
          ? '   If it answers status "setup_required", put its questions to the user with the proposed answers, save the answers with configure_agent, then call write_article again.'
          : '   If it answers status "setup_required", tell the user the project\'s writer must first be set up by someone who may run configure_agent there.',
        '   If it answers status "running", poll get_job with its job_id until the job has finished.',
      );
      if (canCreate(project)) lines.push('   If write_article cannot run there, write the draft yourself and save it with create_article (status "draft").');
    } else {
      lines.push(
        '1. Write the draft yourself in markdown: a specific title, a one-sentence excerpt, a body with short sections, and two to five tags.',
        `2. Save it with create_article${where ? ` with ${where}` : ''}, leaving status "draft".`,
      );
    }
    lines.push(`${canWrite(project) ? '2' : '3'}. Show the user the draft's title, excerpt and id, and ask what to change. Do not publish it.`);
    return {
      description: `Draft an article about ${clip(args.topic, 80)}${project ? ` in "${project.name}"` : ''}.`,
      messages: [textMessage(lines.join('\n'))],
    };
  }
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

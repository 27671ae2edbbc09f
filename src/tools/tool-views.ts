import { Injectable } from '@nestjs/common';
import { MediaService } from '../media/media.service.js';
import { jsonToolResult, ToolReply, ToolViewData, type ToolContext } from '../protocol/mcp-tool.decorator.js';

/** The tools a view may call: it offers each only where the catalogue lets this credential run it in the project. */
export const VIEW_TOOLS = [
  'get_article',
  'list_articles',
  'update_article',
  'publish_article',
  'generate_image',
  'get_job',
  'write_article',
  'configure_agent',
] as const;

/** Where the featured image of an article travels to its view, as a `data:` URL: in the result's `_meta`, which the model does not read. */
export const FEATURED_IMAGE_META = 'reblog/featured_image';

/** What a view needs beside the tool's own answer: the project it acts in and the tools it may call there. */
export interface ViewData {
  project: { id: string; name: string };
  tools: string[];
}

/**
 * A result for a client that renders views: the same text block as any client gets, and
 * `structuredContent` with `view` ({@link ViewData}) added; the featured image, if any, in `_meta`.
 */
export class ViewReply extends ToolReply {
  constructor(
    reply: ToolReply,
    private readonly view: ViewData,
    private readonly image: string | null,
  ) {
    super(reply.value, reply.extraContent, reply.outcome);
  }

  override result(): Record<string, unknown> {
    const plain = jsonToolResult(this.value, this.extraContent);
    return {
      ...plain,
      structuredContent: { ...this.value, view: this.view },
      ...(this.image ? { _meta: { [FEATURED_IMAGE_META]: this.image } } : {}),
    };
  }
}

/**
 * Shapes the results of the tools linked to a view (ToolContext.view; the transport calls it only for
 * a client that renders views, every other one gets the tool's answer untouched); such a client gets a
 * {@link ViewReply}. Which tools the view offers is the catalogue's own rule (ToolContext.mayRun),
 * never a copy of it.
 */
@Injectable()
export class ToolViews extends ToolViewData {
  constructor(private readonly media: MediaService) {
    super();
  }

  /** `answer` for the project `projectId` (the call's own project by default), with what its view needs. */
  async reply(ctx: ToolContext, answer: object | ToolReply, projectId: string | undefined): Promise<object | ToolReply> {
    const id = projectId ?? ctx.project?.id;
    const project = id === undefined ? undefined : ctx.principal.projects.get(id);
    if (!ctx.views || !project) return answer;
    const reply = answer instanceof ToolReply ? answer : new ToolReply(answer as Record<string, unknown>);
    const tools = VIEW_TOOLS.filter((name) => ctx.mayRun(name, project.id));
    const imageId = featuredImageId(reply.value);
    const image = imageId ? await this.media.findWithData(ctx.principal.accountId, [project.id], imageId) : null;
    const dataUrl = image ? `data:${image.mime_type};base64,${image.data.toString('base64')}` : null;
    return new ViewReply(reply, { project: { id: project.id, name: project.name }, tools }, dataUrl);
  }
}

/** The featured image of the article an answer carries: itself, or under `article` (write_article), or under a job's `result`. */
function featuredImageId(value: Record<string, unknown>): string | null {
  const result = value.result as Record<string, unknown> | undefined;
  const article = (value.article ?? result?.article ?? value) as { featured_image_id?: unknown };
  return typeof article.featured_image_id === 'string' ? article.featured_image_id : null;
}

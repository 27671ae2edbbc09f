import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ArticlesModule } from '../articles/articles.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { MediaModule } from '../media/media.module.js';
import { CancelJobTool } from './cancel-job.tool.js';
import { ConfigureAgentTool } from './configure-agent.tool.js';
import { CreateArticleTool } from './create-article.tool.js';
import { DeleteArticleTool } from './delete-article.tool.js';
import { GenerateImageTool } from './generate-image.tool.js';
import { GetAgentConfigTool } from './get-agent-config.tool.js';
import { GetArticleTool } from './get-article.tool.js';
import { GetJobTool } from './get-job.tool.js';
import { JobReplies } from './job-replies.js';
import { ListArticlesTool } from './list-articles.tool.js';
import { ListJobsTool } from './list-jobs.tool.js';
import { ListProjectsTool } from './list-projects.tool.js';
import { PublishArticleTool } from './publish-article.tool.js';
import { UpdateArticleTool } from './update-article.tool.js';
import { WriteArticleTool } from './write-article.tool.js';
import { ToolViewData } from '../protocol/mcp-tool.decorator.js';
import { ToolViews } from './tool-views.js';
import { WriterSetup } from './writer-setup.js';

/** Every MCP tool of the product: thin adapters over the domain services, found by the catalogue at boot. */
@Module({
  imports: [ArticlesModule, AgentsModule, JobsModule, MediaModule],
  providers: [
    ListProjectsTool,
    ListArticlesTool,
    GetArticleTool,
    CreateArticleTool,
    UpdateArticleTool,
    PublishArticleTool,
    DeleteArticleTool,
    CancelJobTool,
    ConfigureAgentTool,
    GenerateImageTool,
    GetAgentConfigTool,
    GetJobTool,
    JobReplies,
    WriterSetup,
    { provide: ToolViewData, useClass: ToolViews },
    ListJobsTool,
    WriteArticleTool,
  ],
})
export class ToolsModule {}

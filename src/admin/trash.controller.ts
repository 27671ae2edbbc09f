import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiPropertyOptional, ApiQuery, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ArticleTrashService } from '../articles/article-trash.service.js';
import { HANDLE_MAX, HANDLE_PATTERN } from '../articles/handles.js';
import { PageQuery } from '../common/pagination.js';
import { AdminGuard } from './admin.guard.js';

const uuid = new ParseUUIDPipe({ version: undefined });

export class RestoreArticleDto {
  @ApiPropertyOptional({ description: "Restore under this handle instead of the article's own (when a live article took it meanwhile).", example: 'my-post-2' })
  @IsOptional()
  @IsString()
  @MaxLength(HANDLE_MAX)
  @Matches(HANDLE_PATTERN, { message: 'handle must be lower-case letters and digits joined by single hyphens' })
  handle?: string;
}

@ApiTags('trash')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1')
export class TrashController {
  constructor(private readonly trash: ArticleTrashService) {}

  @Get('projects/:project_id/trash')
  @ApiOperation({ summary: 'Deleted articles of a project, newest deletion first; each is purged 30 days after its deletion (purge_at).' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } })
  @ApiQuery({ name: 'cursor', required: false, schema: { type: 'string' }, description: 'next_cursor of the previous page.' })
  @ApiOkResponse({ description: '{"items": [trashed article], "next_cursor": null | "..."}' })
  @ApiNotFoundResponse({ description: 'Unknown project.' })
  list(@Param('project_id', uuid) projectId: string, @Query() query: PageQuery) {
    return this.trash.list(projectId, query.limit, query.cursor);
  }

  @Post('articles/:article_id/restore')
  @HttpCode(200)
  @ApiOperation({ summary: 'Puts a deleted article back in its project, keeping its state before as a revision.' })
  @ApiOkResponse({ description: 'The restored article.' })
  @ApiNotFoundResponse({ description: 'No such article in the trash (unknown, or purged).' })
  @ApiConflictResponse({
    description:
      'handle_taken: a live article took its handle meanwhile (details.suggestion is free; send it as handle); invalid_state: the article is not deleted.',
  })
  restore(@Param('article_id', uuid) articleId: string, @Body() body: RestoreArticleDto) {
    return this.trash.restore(articleId, body?.handle);
  }
}

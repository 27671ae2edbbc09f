import { Injectable } from '@nestjs/common';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  McpResources,
  type ResourceContents,
  type ResourceEntry,
  type ResourcePage,
  type ResourceProvider,
  type ResourceTemplateEntry,
} from '../../src/resources/mcp-resources.decorator.js';

/**
 * The fixture resources the resources-* scenarios of `@modelcontextprotocol/conformance` read and
 * subscribe to (names and contents as the suite's reference server gives them): registered only by
 * the conformance entry point and the fixtures' e2e test, through the same registry as the product's.
 */

// A 1×1 red PNG.
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4AWP4z8DwHwAFAAH/e+m+7wAAAABJRU5ErkJggg==';

const STATIC: Record<string, { entry: ResourceEntry; contents: ResourceContents }> = {
  'test://static-text': {
    entry: {
      uri: 'test://static-text',
      name: 'static-text',
      title: 'Static Text Resource',
      description: 'A static text resource for testing',
      mimeType: 'text/plain',
    },
    contents: { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
  },
  'test://static-binary': {
    entry: {
      uri: 'test://static-binary',
      name: 'static-binary',
      title: 'Static Binary Resource',
      description: 'A static binary resource (image) for testing',
      mimeType: 'image/png',
    },
    contents: { uri: 'test://static-binary', mimeType: 'image/png', blob: RED_PIXEL_PNG },
  },
  'test://watched-resource': {
    entry: {
      uri: 'test://watched-resource',
      name: 'watched-resource',
      title: 'Watched Resource',
      description: 'A resource a client may subscribe to',
      mimeType: 'text/plain',
    },
    contents: { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' },
  },
};

const TEMPLATE = new UriTemplate('test://template/{id}/data');

@McpResources({ name: 'conformance' })
@Injectable()
export class ConformanceResources implements ResourceProvider {
  list(): ResourcePage {
    return { resources: Object.values(STATIC).map((r) => r.entry) };
  }

  templates(): ResourceTemplateEntry[] {
    return [
      {
        uriTemplate: TEMPLATE.toString(),
        name: 'template',
        title: 'Resource Template',
        description: 'A resource template with parameter substitution',
        mimeType: 'application/json',
      },
    ];
  }

  read(uri: string): ResourceContents[] | undefined {
    const found = STATIC[uri];
    if (found) return [found.contents];
    const id = TEMPLATE.match(uri)?.id;
    if (typeof id !== 'string' || !id) return undefined;
    return [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }];
  }
}

export const RESOURCE_FIXTURES = [ConformanceResources];

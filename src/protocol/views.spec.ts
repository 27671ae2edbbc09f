import { cleanCapabilities } from './client-capabilities.js';
import { takesViews, UI_EXTENSION, VIEW_MIME_TYPE } from './views.js';

describe('takesViews (docs/protocol.md#mcp-apps-views)', () => {
  it('is the extension declared as an object under extensions, with our MIME type when it lists any', () => {
    expect(takesViews({ extensions: { [UI_EXTENSION]: {} } })).toBe(true);
    expect(takesViews({ extensions: { [UI_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } } })).toBe(true);
    expect(takesViews({ extensions: { [UI_EXTENSION]: { mimeTypes: ['text/uri-list'] } } })).toBe(false);
    expect(takesViews({ extensions: { [UI_EXTENSION]: true } })).toBe(false);
    expect(takesViews({ extensions: { [UI_EXTENSION]: [] } })).toBe(false);
    expect(takesViews({ extensions: {} })).toBe(false);
    expect(takesViews({ experimental: { [UI_EXTENSION]: {} } })).toBe(false);
    expect(takesViews({})).toBe(false);
  });

  it('a 2025 session keeps the extensions its client declared on initialize', () => {
    const kept = cleanCapabilities({ sampling: {}, extensions: { [UI_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } }, bogus: {} });
    expect(kept).toEqual({ sampling: {}, extensions: { [UI_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } } });
    expect(takesViews(kept)).toBe(true);
  });
});

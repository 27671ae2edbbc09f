// The import rules of docs/architecture.md (#layers), checked by `npm run deps` (and CI).
//
// Only value imports count: `tsPreCompilationDeps: false` reads each file as TypeScript compiles it,
// so an `import type` (or an import used only as a type) is no dependency, exactly as at run time.
// A folder is a top-level folder of src/ (src/oauth/tokens is part of src/oauth).

/**
 * A temporary exception to edges-are-apart, by the file imported, with its way out: the admin API
 * manages OAuth clients through the authorization server's own client service
 * (`oauth/oauth.module.ts`, `oauth/clients/oauth-clients.service.ts`), until the client registry is a
 * domain module.
 */
const SHARED_FOR_NOW = '^src/(oauth/oauth\\.module|oauth/clients/oauth-clients\\.service)\\.ts$';

/** HTTP edges: each speaks its own surface over the domain, and none imports another. */
const EDGES = 'mcp|admin|oauth|sign-in|console';
/** The MCP features beside the transport: they import the protocol leaf and the domain, never the transport. */
const MCP_FEATURES = 'tools|resources|prompts|completions|tasks';
/** The domain: services, repositories and the infrastructure under them. */
const DOMAIN =
  'accounts|activity|agents|ai|articles|auth|common|config|database|health|identity-providers|jobs|login-links|media|metrics|people|projects|queries|rate-limit|users';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A module never reaches itself again through value imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment: 'The folders of src/ form no cycle either: each layer builds on the ones below it only.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/[^/]+$' },
      to: { path: '^src/[^/]+$', circular: true },
    },
    {
      name: 'domain-knows-no-edge',
      comment: 'A domain module knows neither an HTTP edge nor the MCP features, the protocol leaf or the page kit.',
      severity: 'error',
      from: { path: `^src/(${DOMAIN})/` },
      to: { path: `^src/(${EDGES}|${MCP_FEATURES}|protocol|web|demo)/` },
    },
    {
      name: 'edges-are-apart',
      comment: 'An edge never imports another edge: what two edges share lives below them (domain, web/, protocol/).',
      severity: 'error',
      from: { path: `^src/(${EDGES})/` },
      to: { path: `^src/(${EDGES})/`, pathNot: `^src/$1/|${SHARED_FOR_NOW}` },
    },
    {
      name: 'edges-leave-mcp-features',
      comment: "The tools, resources, prompts, completions and tasks are the MCP edge's: no other edge imports them.",
      severity: 'error',
      from: { path: '^src/(admin|oauth|sign-in|console)/' },
      to: { path: `^src/(${MCP_FEATURES}|protocol)/` },
    },
    {
      name: 'mcp-features-leave-the-transport',
      comment: 'A feature registers its methods with @McpMethod and uses the ports of src/protocol/, never src/mcp/.',
      severity: 'error',
      from: { path: `^src/(${MCP_FEATURES}|protocol)/` },
      to: { path: `^src/(${EDGES})/` },
    },
    {
      name: 'transport-imports-no-feature',
      comment: 'src/mcp/ finds the methods and tools at boot; it imports no feature.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: `^src/(${MCP_FEATURES})/` },
    },
    {
      name: 'protocol-is-a-leaf',
      comment: 'src/protocol/ (types, ports, the tool catalogue) builds on common/ only.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/(protocol|common)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

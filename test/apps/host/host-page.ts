// The test host of the MCP Apps views (test/apps/views-browser.e2e-spec.ts): the SDK's own host side
// (AppBridge over PostMessageTransport) rendering a view in a sandboxed iframe, as Claude or VS Code
// do. Bundled by the test with esbuild and run in Chromium. The view's tool calls go to
// `window.hostCallTool`, which the test exposes: the test's MCP client holds the key, the view never does.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

interface Mount {
  html: string;
  csp: { connectDomains?: string[]; resourceDomains?: string[] };
  toolInput: Record<string, unknown>;
  toolResult: Record<string, unknown>;
  hostContext: Record<string, unknown>;
}

declare global {
  interface Window {
    hostCallTool(params: unknown): Promise<Record<string, unknown>>;
    mountView(mount: Mount): Promise<void>;
    /** What a host does when its context changes (another locale, theme…): the view hears of the change. */
    setHostContext(hostContext: Record<string, unknown>): void;
    viewCalls: string[];
  }
}

/** The CSP a host derives from the resource's `_meta.ui.csp`: nothing but the document itself and data: images. */
function policy(csp: Mount['csp']): string {
  const resources = (csp.resourceDomains ?? []).join(' ');
  const connect = (csp.connectDomains ?? []).join(' ') || "'none'";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `connect-src ${connect}`,
    "frame-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

window.viewCalls = [];
let current: AppBridge | null = null;
window.setHostContext = (hostContext) => current?.setHostContext(hostContext as never);

window.mountView = async ({ html, csp, toolInput, toolResult, hostContext }: Mount) => {
  document.getElementById('frame')?.remove();
  const iframe = document.createElement('iframe');
  iframe.id = 'frame';
  iframe.title = 'Reblog view';
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp)}">`;
  iframe.srcdoc = html.replace('<head>', `<head>${meta}`);
  document.body.append(iframe);

  const bridge = new AppBridge(
    null,
    { name: 'reblog-test-host', version: '1.0.0' },
    { serverTools: {}, openLinks: {}, logging: {} },
    { hostContext: hostContext as never },
  );
  current = bridge;
  bridge.oncalltool = async (params) => {
    window.viewCalls.push(params.name);
    return (await window.hostCallTool(params)) as never;
  };
  bridge.onsizechange = ({ height }) => {
    if (typeof height === 'number') iframe.style.height = `${Math.ceil(height)}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  await initialized;
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult as never);
};

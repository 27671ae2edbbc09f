import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hashSecret } from '../../auth/secrets.js';
import { ROLES, SCOPES, type ProjectRole, type Scope } from '../../common/tool-names.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import type { Membership } from '../../users/user.js';
import { UsersService } from '../../users/users.service.js';
import { BrowserSessionsService, type BrowserSession } from '../../web/browser-sessions.service.js';
import type { CrossSite } from '../../web/page-policy.js';
import type { OAuthClient } from '../clients/oauth-client.js';
import { OAuthClientsService, UnknownClientError } from '../clients/oauth-clients.service.js';
import { formActionSource, isLoopbackRedirect, isPrivateUseRedirect, redirectDisplay, redirectUriRegistered } from '../clients/redirect-uris.js';
import { CODE_CHALLENGE, MAX_STATE_BYTES, canonicalResource, many, requestedScopes, single, withQuery } from './authorize-params.js';
import { AuthorizationsRepository, OPEN_REQUESTS_PER_SESSION, type AuthorizationRequest } from './authorizations.repository.js';
import { OAuthError } from '../oauth-error.js';
import { tryLaterPage, type ConsentView, type PageOutcome } from './consent-page.js';

/** The parts of an authorize request the consent page needs again (a stored request has the same). */
interface Asked {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string | null;
  scopes: Scope[];
}

/**
 * `GET /oauth/authorize` and `POST /oauth/consent` (docs/oauth.md#authorize, docs/oauth.md#consent): a request is
 * checked in the documented order, the signed-in person is asked, and what they approve becomes a code.
 * Nothing a form says can widen what was asked or what the person may do.
 */
@Injectable()
export class AuthorizeService {
  private readonly issuer: string;
  private readonly publicOrigin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly clients: OAuthClientsService,
    private readonly users: UsersService,
    private readonly sessions: BrowserSessionsService,
    private readonly authorizations: AuthorizationsRepository,
  ) {
    this.issuer = config.publicUrl;
    this.publicOrigin = new URL(config.publicUrl).origin;
  }

  async authorize(query: Record<string, unknown>, session: BrowserSession | null, pathAndQuery: string): Promise<PageOutcome> {
    // 1. Until the client and its redirect URI are known, nothing may be sent anywhere: an error page.
    const clientId = single(query.client_id);
    const redirectUri = single(query.redirect_uri);
    if (!clientId) return this.badRequest(clientId === null ? 'client_id is sent more than once.' : 'The request names no client (client_id is missing).');
    let client: OAuthClient;
    try {
      client = await this.clients.resolve(clientId);
    } catch (err) {
      if (err instanceof UnknownClientError) return this.badRequest(err.message);
      if (err instanceof OAuthError && err.status === 503) return tryLaterPage(503, err.message, Number(err.headers['Retry-After']));
      throw err;
    }
    if (!redirectUri) return this.badRequest(redirectUri === null ? 'redirect_uri is sent more than once.' : 'The request has no redirect_uri.');
    if (!redirectUriRegistered(client.redirect_uris, redirectUri)) {
      return this.badRequest(
        `The redirect_uri "${redirectUri}" is not one that ${client.client_name ?? 'this client'} registered, so Reblog will not send anything there.`,
      );
    }

    // 2. Every other error goes back to the client.
    const state = single(query.state);
    const fail = (error: string, description: string): PageOutcome => this.redirectError(redirectUri, error, description, state ?? null);
    const duplicated = Object.entries(query).find(([, v]) => typeof v !== 'string');
    if (duplicated) return fail('invalid_request', `The parameter ${duplicated[0]} is sent more than once.`);
    if (state && Buffer.byteLength(state) > MAX_STATE_BYTES) return fail('invalid_request', `state is longer than ${MAX_STATE_BYTES} bytes.`);
    if (query.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
    const challenge = single(query.code_challenge);
    if (!challenge || !CODE_CHALLENGE.test(challenge)) return fail('invalid_request', 'PKCE is required: send a code_challenge of 43 to 128 characters.');
    if (query.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
    // Every parameter is a single string from here on (duplicates were refused above).
    const resourceAsked = query.resource as string | undefined;
    const resource = resourceAsked === undefined ? null : canonicalResource(resourceAsked, this.issuer);
    if (resourceAsked !== undefined && !resource) return fail('invalid_target', `resource must be ${this.issuer}/mcp (or ${this.issuer}).`);
    const scopes = requestedScopes(query.scope as string | undefined);
    if (!scopes) return fail('invalid_scope', `None of the scopes asked is known here; ask for some of: ${SCOPES.join(' ')}.`);

    // 3. The person signs in first, and comes back here.
    if (!session) return { kind: 'redirect', location: `/oauth/login?return_to=${encodeURIComponent(pathAndQuery)}` };

    // 4. The consent page, for a request stored for this browser session.
    const asked: Asked = { client, redirectUri, state: state ?? null, codeChallenge: challenge, resource, scopes };
    const memberships = await this.users.memberships(session.user.id);
    if (!memberships.length) return this.noAccount(session, asked);
    const requestId = randomBytes(32).toString('base64url');
    // The session's oldest open requests beyond the cap go in the same transaction.
    const stored = {
      idHash: hashSecret(requestId),
      browserSessionHash: session.idHash,
      clientId: client.id,
      redirectUri,
      state: asked.state,
      codeChallenge: challenge,
      resource,
      scopes,
    };
    await this.db.transaction((tx) => this.authorizations.insertRequest(stored, OPEN_REQUESTS_PER_SESSION, tx));
    const accountId = memberships.some((m) => m.account_id === query.account_id) ? (query.account_id as string) : memberships[0].account_id;
    return { kind: 'consent', status: 200, view: await this.view(session, asked, requestId, memberships, accountId) };
  }

  /** The consent form's post; `crossSite` is what the page policy (PagePolicy.crossSite) found in its headers. */
  async consent(form: Record<string, unknown>, session: BrowserSession | null, crossSite: CrossSite | null): Promise<PageOutcome> {
    // A post that is not this session's own form gets no code, and no redirect either.
    if (crossSite?.by === 'sec-fetch-site') return this.forbidden(session, 'This form was posted from another site.');
    if (crossSite) return this.forbidden(session, `This form was posted from ${crossSite.origin}, not from ${this.publicOrigin}.`);
    if (!session) return this.forbidden(null, 'You are not signed in (any more). Start connecting again from your app.');
    if (!this.sessions.csrfMatches(session, form.csrf))
      return this.forbidden(session, 'This form is not one Reblog showed you in this browser (its security token does not match).');
    const requestId = single(form.request_id);
    const request = requestId ? await this.authorizations.findRequest(hashSecret(requestId)) : null;
    if (!request)
      return this.forbidden(session, 'This consent request is unknown, or newer ones from this browser replaced it. Start connecting again from your app.');
    if (!request.browser_session_hash.equals(session.idHash))
      return this.forbidden(session, 'This consent request was started in another browser session. Start connecting again from your app.');
    if (request.used_at) return this.forbidden(session, 'This consent request was already answered. Start connecting again from your app.');
    if (request.expired) return this.forbidden(session, 'This consent request has expired (10 minutes). Start connecting again from your app.');
    const client = await this.clients.get(request.client_id);
    if (!client) return this.forbidden(session, 'The app that asked has been removed. Start connecting again from your app.');
    const asked: Asked = {
      client,
      redirectUri: request.redirect_uri,
      state: request.state,
      codeChallenge: request.code_challenge,
      resource: request.resource,
      scopes: request.scopes,
    };

    const decision = single(form.decision);
    if (decision === 'deny') return this.deny(request, session);
    const memberships = await this.users.memberships(session.user.id);
    const accountId = single(form.account_id);
    const account = memberships.find((m) => m.account_id === accountId);
    const again = async (message: string, accountShown = account?.account_id ?? memberships[0]?.account_id): Promise<PageOutcome> => {
      if (!accountShown) return this.noAccount(session, asked);
      return { kind: 'consent', status: 400, view: { ...(await this.view(session, asked, requestId!, memberships, accountShown, form)), message } };
    };
    if (decision !== 'approve') return again('Choose Approve or Deny.');
    if (!account) return again('Choose one of your accounts.');

    // Clamp what the form says to what was asked and to the person's projects: forged fields never widen.
    const scopes = request.scopes.filter((s) => many(form.scope).includes(s));
    if (!scopes.length) return again('Choose at least one thing the app may do.');
    const roles = new Map((await this.users.projectRoles(session.user.id, account.account_id)).map((p) => [p.project_id, p.role]));
    const chosen = [...new Set(many(form.project))].filter((id) => roles.has(id));
    if (!chosen.length) return again('Choose at least one project.');
    const projects: { project_id: string; role: ProjectRole }[] = [];
    for (const id of chosen) {
      const most = roles.get(id)!;
      const asked = single(form[`role_${id}`]) ?? most;
      if (!(ROLES as readonly string[]).includes(asked)) return again('Choose a role for each project from the list.');
      if (ROLES.indexOf(asked as ProjectRole) > ROLES.indexOf(most)) return again(`You cannot give a role above your own (${most}) on a project.`);
      projects.push({ project_id: id, role: asked as ProjectRole });
    }

    const code = randomBytes(32).toString('base64url');
    const issued = await this.db.transaction(async (tx) => {
      if (!(await this.authorizations.consumeRequest(request.id_hash, session.idHash, tx))) return false;
      await this.authorizations.insertCode(
        {
          codeHash: hashSecret(code),
          clientId: client.id,
          userId: session.user.id,
          accountId: account.account_id,
          redirectUri: request.redirect_uri,
          codeChallenge: request.code_challenge,
          resource: request.resource,
          scopes,
          projects,
        },
        tx,
      );
      return true;
    });
    // Another post of the same form won the race.
    if (!issued) return this.forbidden(session, 'This consent request was already answered. Start connecting again from your app.');
    return { kind: 'redirect', location: withQuery(request.redirect_uri, { code, state: request.state, iss: this.issuer }) };
  }

  private async deny(request: AuthorizationRequest, session: BrowserSession): Promise<PageOutcome> {
    if (!(await this.authorizations.consumeRequest(request.id_hash, session.idHash))) {
      return this.forbidden(session, 'This consent request was already answered. Start connecting again from your app.');
    }
    return this.redirectError(request.redirect_uri, 'access_denied', 'The person denied the request.', request.state);
  }

  /** The consent page's content: the accounts, the chosen account's projects where the person has a role, the scopes asked. */
  private async view(
    session: BrowserSession,
    asked: Asked,
    requestId: string,
    memberships: Membership[],
    accountId: string,
    form?: Record<string, unknown>,
  ): Promise<ConsentView> {
    const account = memberships.find((m) => m.account_id === accountId)!;
    const projects = await this.users.projectRoles(session.user.id, accountId);
    const checkedScopes = form ? many(form.scope) : asked.scopes.filter((s) => s !== 'delete');
    const checkedProjects = form ? many(form.project) : projects.length === 1 ? [projects[0].project_id] : [];
    const link = new URLSearchParams({ response_type: 'code', client_id: asked.client.id, redirect_uri: asked.redirectUri, scope: asked.scopes.join(' ') });
    if (asked.state !== null) link.set('state', asked.state);
    link.set('code_challenge', asked.codeChallenge);
    link.set('code_challenge_method', 'S256');
    if (asked.resource) link.set('resource', asked.resource);
    return {
      requestId,
      csrf: session.csrf,
      client: clientShown(asked.client),
      redirect: {
        display: redirectDisplay(asked.redirectUri),
        loopback: isLoopbackRedirect(asked.redirectUri),
        app: isPrivateUseRedirect(asked.redirectUri),
        formAction: formActionSource(asked.redirectUri),
      },
      user: { email: session.user.email, name: session.user.name },
      accounts: memberships.map((m) => ({
        id: m.account_id,
        name: m.account_name,
        href: `/oauth/authorize?${link}&account_id=${encodeURIComponent(m.account_id)}`,
      })),
      account: { id: account.account_id, name: account.account_name },
      scopes: asked.scopes.map((scope) => ({ scope, checked: checkedScopes.includes(scope) })),
      projects: projects.map((p) => {
        const role = form ? single(form[`role_${p.project_id}`]) : undefined;
        return {
          id: p.project_id,
          name: p.name,
          maxRole: p.role,
          checked: checkedProjects.includes(p.project_id),
          role: role && ROLES.indexOf(role as ProjectRole) >= 0 && ROLES.indexOf(role as ProjectRole) <= ROLES.indexOf(p.role) ? (role as ProjectRole) : p.role,
        };
      }),
    };
  }

  private redirectError(redirectUri: string, error: string, description: string, state: string | null): PageOutcome {
    return { kind: 'redirect', location: withQuery(redirectUri, { error, error_description: description, state, iss: this.issuer }) };
  }

  private badRequest(message: string): PageOutcome {
    return {
      kind: 'error',
      status: 400,
      title: 'This connection request cannot be used',
      message: `${message} Nothing was sent to the app; start connecting again from it.`,
    };
  }

  private forbidden(session: BrowserSession | null, message: string): PageOutcome {
    return { kind: 'error', status: 403, title: 'Nothing was approved', message, signedInAs: session?.user.email };
  }

  private noAccount(session: BrowserSession, asked: Asked): PageOutcome {
    return {
      kind: 'error',
      status: 403,
      title: 'You have no Reblog account to connect',
      message: `You (${session.user.email}) are not a member of any account yet. Ask your operator to add you to one.`,
      signedInAs: session.user.email,
      back: {
        href: withQuery(asked.redirectUri, {
          error: 'access_denied',
          error_description: 'The person has no account to connect.',
          state: asked.state,
          iss: this.issuer,
        }),
        label: 'Go back to the app',
      },
    };
  }
}

/** How the consent page names a client: a metadata document's client by its host, any other as unverified. */
function clientShown(client: OAuthClient): ConsentView['client'] {
  const documentHost = client.source === 'cimd' ? new URL(client.id).host : null;
  return { name: client.client_name ?? documentHost ?? 'An unnamed app', documentHost };
}

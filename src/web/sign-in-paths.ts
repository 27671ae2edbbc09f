/**
 * Where an identity provider sends people back after they signed in (the redirect URI registered
 * there, after `PUBLIC_URL`): one callback for the server-wide provider and every account's
 * (docs/oauth.md#sign-in-with-an-identity-provider-oidc). The console shows it to account owners.
 */
export const OIDC_CALLBACK_PATH = '/oauth/callback/oidc';

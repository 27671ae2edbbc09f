export type ClientSource = 'dcr' | 'cimd';
export type TokenEndpointAuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic' | 'private_key_jwt';

/** A client that may ask for grants: registered here (dcr) or described by its metadata document (cimd, id = the document's URL). */
export interface OAuthClient {
  id: string;
  source: ClientSource;
  client_name: string | null;
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  /** Hash of a confidential client's secret (shown once at registration). */
  secret_hash: Buffer | null;
  /** The registered (or fetched) metadata as the client sent it, for the registration answer. */
  metadata: Record<string, unknown>;
  document_fetched_at: Date | null;
  document_fresh_until: Date | null;
  created_at: Date;
  last_used_at: Date | null;
}

import { Injectable } from '@nestjs/common';
import type { OAuthClient } from './oauth-client.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';

/** OAuth clients: registered ones and (to come in this module) those described by a Client ID Metadata Document. */
@Injectable()
export class OAuthClientsService {
  constructor(private readonly clients: OAuthClientsRepository) {}

  /** The client a `client_id` names, or null when it names none. */
  resolve(clientId: string): Promise<OAuthClient | null> {
    return this.clients.find(clientId);
  }

  touch(clientId: string): Promise<void> {
    return this.clients.touch(clientId);
  }
}

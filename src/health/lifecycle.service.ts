import { Injectable } from '@nestjs/common';

/** Whether the process is draining (SIGTERM received): readiness goes false, new work is refused. */
@Injectable()
export class LifecycleService {
  private drainingSince: number | null = null;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }
}

import { Injectable } from '@nestjs/common';

/** The time, injected: the system clock, which a test may set. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

import { CanActivate, Controller, Get, Header, Query, Type, UseGuards } from '@nestjs/common';
import { IdempotencyStats, IdempotencyStatsSnapshot } from '../observability/idempotency-stats.service';
import { renderCenterPage } from './idempotency-center.page';

/**
 * Builds the Center's controller for a path and guards known only at `forRoot()` time (Nest reads
 * routes and guards from decorators, so the class is made per configuration).
 */
export function createIdempotencyCenterController(
  path: string,
  guards: Array<Type<CanActivate> | CanActivate>,
): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class IdempotencyCenterController {
    constructor(private readonly stats: IdempotencyStats) {}

    /** The counters and coverage as JSON. */
    @Get()
    snapshot(): Promise<IdempotencyStatsSnapshot> {
      return this.stats.snapshot();
    }

    /** The same as an HTML page; `?refresh=5` reloads it every 5 s. */
    @Get('ui')
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    async page(@Query('refresh') refresh?: string): Promise<string> {
      return renderCenterPage(await this.stats.snapshot(), refresh ? Number(refresh) : undefined);
    }
  }
  return IdempotencyCenterController;
}

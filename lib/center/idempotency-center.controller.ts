import {
  BadRequestException,
  CanActivate,
  Controller,
  Get,
  Header,
  HttpException,
  Query,
  Type,
  UseGuards,
} from '@nestjs/common';
import { IdempotencyStats, IdempotencyStatsSnapshot } from '../observability/idempotency-stats.service';
import { CENTER_PAGE_CSP } from './center-page.style';
import type { CenterKeyLookup, CenterOverview, CenterRecords } from './idempotency-center.api';
import { IdempotencyCenterService } from './idempotency-center.service';
import { CenterPageLookup, renderCenterPage } from './idempotency-center.page';

/** The controller for a path and guards known at `forRoot()` (Nest reads both from decorators); read-only. */
export function createIdempotencyCenterController(
  path: string,
  guards: Array<Type<CanActivate> | CanActivate>,
): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class IdempotencyCenterController {
    constructor(
      private readonly center: IdempotencyCenterService,
      private readonly stats: IdempotencyStats,
    ) {}

    /** The page; `?refresh=5` reloads it every 5 s (a whole number, 0 for never), `?type=...&key=...` looks a key up. */
    @Get('ui')
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', CENTER_PAGE_CSP)
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'no-referrer')
    async page(
      @Query('refresh') refresh?: unknown,
      @Query('type') type?: unknown,
      @Query('key') key?: unknown,
    ): Promise<string> {
      const refreshText = single('refresh', refresh);
      const seconds = refreshText === undefined ? 0 : Number(refreshText);
      if (!(Number.isSafeInteger(seconds) && seconds >= 0)) {
        throw new BadRequestException(
          'refresh must be a whole number of seconds between reloads (0 or left out: none), ' +
            `got ${JSON.stringify(refreshText)}.`,
        );
      }
      const types = this.center.lookupTypes();
      const lookup: CenterPageLookup = { types };
      if (typeof type === 'string') lookup.type = type;
      if (typeof key === 'string' && key !== '') {
        lookup.key = key;
        try {
          lookup.result = await this.center.lookup(lookup.type ?? types[0] ?? '', key);
        } catch (error) {
          if (!(error instanceof HttpException)) throw error;
          lookup.error = error.message;
        }
      }
      return renderCenterPage(await this.center.overview(), lookup, seconds);
    }

    /** Everything the page shows, as JSON (`CenterOverview`). */
    @Get('api/v1/overview')
    @Header('Cache-Control', 'no-store')
    overview(): Promise<CenterOverview> {
      return this.center.overview();
    }

    /** The counters and coverage (`IdempotencyStatsSnapshot`); `<path>` itself is the 0.1 endpoint, unchanged. */
    @Get(['', 'api/v1/counters'])
    @Header('Cache-Control', 'no-store')
    counters(): Promise<IdempotencyStatsSnapshot> {
      return this.stats.snapshot();
    }

    /** Recent records, newest first: `?eventType=&status=&key=&limit=` (limit 1 to 1,000, default 100). */
    @Get('api/v1/records')
    @Header('Cache-Control', 'no-store')
    records(
      @Query('eventType') eventType?: unknown,
      @Query('status') status?: unknown,
      @Query('key') key?: unknown,
      @Query('limit') limit?: unknown,
    ): Promise<CenterRecords> {
      const limitText = single('limit', limit);
      const limitNumber = limitText === undefined ? undefined : Number(limitText);
      if (
        limitNumber !== undefined &&
        !(Number.isInteger(limitNumber) && limitNumber >= 1 && limitNumber <= 1_000)
      ) {
        throw new BadRequestException(
          `limit must be an integer from 1 to 1,000 (leave it out for 100), got ${JSON.stringify(limitText)}.`,
        );
      }
      return this.center.records({
        eventType: single('eventType', eventType),
        status: single('status', status),
        key: single('key', key),
        limit: limitNumber,
      });
    }

    /** What happened to one key: `?eventType=order_created&key=evt-42` (`CenterKeyLookup`). */
    @Get('api/v1/lookup')
    @Header('Cache-Control', 'no-store')
    lookup(@Query('eventType') eventType?: unknown, @Query('key') key?: unknown): Promise<CenterKeyLookup> {
      return this.center.lookup(single('eventType', eventType) ?? '', single('key', key) ?? '');
    }
  }
  return IdempotencyCenterController;
}

/** A query parameter given at most once, as a string. */
function single(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new BadRequestException(`${name} must be given once, as text.`);
  return value;
}

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
    async page(@Query() query: QueryParameters): Promise<string> {
      const refresh = wholeNumber(query, 'refresh', (seconds) => seconds >= 0);
      const types = this.center.lookupTypes();
      const lookup: CenterPageLookup = { types };
      if (typeof query.type === 'string') lookup.type = query.type;
      if (typeof query.key === 'string' && query.key !== '') {
        lookup.key = query.key;
        try {
          lookup.result = await this.center.lookup(lookup.type ?? types[0] ?? '', query.key);
        } catch (error) {
          if (!(error instanceof HttpException)) throw error;
          lookup.error = error.message;
        }
      }
      return renderCenterPage(await this.center.overview(), lookup, refresh);
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
    records(@Query() query: QueryParameters): Promise<CenterRecords> {
      return this.center.records({
        limit: wholeNumber(query, 'limit', (limit) => limit >= 1 && limit <= 1_000),
        eventType: single(query, 'eventType'),
        status: single(query, 'status'),
        key: single(query, 'key'),
      });
    }

    /** What happened to one key: `?eventType=order_created&key=evt-42` (`CenterKeyLookup`). */
    @Get('api/v1/lookup')
    @Header('Cache-Control', 'no-store')
    lookup(@Query() query: QueryParameters): Promise<CenterKeyLookup> {
      return this.center.lookup(single(query, 'eventType') ?? '', single(query, 'key') ?? '');
    }
  }
  return IdempotencyCenterController;
}

type QueryParameters = Record<string, unknown>;

/** A query parameter given at most once, as a string. */
function single(query: QueryParameters, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw new BadRequestException(`${name} must be given once, as text.`);
}

/** What each whole-number parameter must be, for the 400 that refuses another. */
const WHOLE_NUMBERS: Record<string, string> = {
  refresh: 'a whole number of seconds between reloads (0 or left out: none)',
  limit: 'an integer from 1 to 1,000 (leave it out for 100)',
};

/** A query parameter given at most once, as a whole number `valid` accepts. */
function wholeNumber(
  query: QueryParameters,
  name: string,
  valid: (n: number) => boolean,
): number | undefined {
  const text = single(query, name);
  if (text === undefined) return undefined;
  const number = Number(text);
  if (Number.isSafeInteger(number) && valid(number)) return number;
  throw new BadRequestException(`${name} must be ${WHOLE_NUMBERS[name]}, got ${JSON.stringify(text)}.`);
}

import { IsInt } from 'class-validator';
import { eventValidator } from './sqs-event.validator';

describe('eventValidator', () => {
  class Counted {
    @IsInt() count!: number;
  }
  class Plain {
    name?: string;
  }
  const toEvent = eventValidator({});

  it('maps onto the class and validates it', async () => {
    const event = await toEvent(Counted, { count: 3 });
    expect(event).toBeInstanceOf(Counted);
    await expect(toEvent(Counted, { count: 'three' })).rejects.toThrow(
      'Counted fails validation: count must be an integer',
    );
  });

  it('accepts classes without validation decorators', async () => {
    await expect(toEvent(Plain, { name: 'x' })).resolves.toBeInstanceOf(Plain);
  });

  it('can skip validation', async () => {
    await expect(eventValidator({ validate: false })(Counted, { count: 'three' })).resolves.toBeInstanceOf(
      Counted,
    );
  });

  it('passes validator options (whitelist, forbidNonWhitelisted)', async () => {
    const strict = eventValidator({ validatorOptions: { whitelist: true, forbidNonWhitelisted: true } });
    await expect(strict(Counted, { count: 1, extra: true })).rejects.toThrow(
      'property extra should not exist',
    );
  });
});

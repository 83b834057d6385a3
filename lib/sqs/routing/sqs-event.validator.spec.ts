import { IsInt } from 'class-validator';
import { toEvent } from './sqs-event.validator';

describe('toEvent', () => {
  class Counted {
    @IsInt() count!: number;
  }
  class Plain {
    name?: string;
  }

  it('maps onto the class and validates it', async () => {
    const event = await toEvent(Counted, { count: 3 }, {});
    expect(event).toBeInstanceOf(Counted);
    await expect(toEvent(Counted, { count: 'three' }, {})).rejects.toThrow(
      'Counted fails validation: count must be an integer',
    );
  });

  it('accepts classes without validation decorators', async () => {
    await expect(toEvent(Plain, { name: 'x' }, {})).resolves.toBeInstanceOf(Plain);
  });

  it('can skip validation', async () => {
    await expect(toEvent(Counted, { count: 'three' }, { validate: false })).resolves.toBeInstanceOf(Counted);
  });

  it('passes validator options (whitelist, forbidNonWhitelisted)', async () => {
    await expect(
      toEvent(
        Counted,
        { count: 1, extra: true },
        { validatorOptions: { whitelist: true, forbidNonWhitelisted: true } },
      ),
    ).rejects.toThrow('property extra should not exist');
  });
});

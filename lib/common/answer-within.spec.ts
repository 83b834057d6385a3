import { answerWithin } from './answer-within';

/** Timers keeping the process alive (an unref'd timer is not one of them). */
const activeTimers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;

describe('answerWithin (the stores’ start-up checks, the Center’s key lookup)', () => {
  it('answers what the call answers', async () => {
    await expect(answerWithin(Promise.resolve('PONG'), 60_000, 'no answer')).resolves.toBe('PONG');
  });

  it('rejects saying what got no answer within how long, once the wait is over', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(answerWithin(never, 20, 'no answer to PING')).rejects.toThrow(
      new Error('no answer to PING within 20 ms'),
    );
  });

  it('holds no process open while it waits (an app that fails to start for another reason exits)', async () => {
    const before = activeTimers();
    let answer!: (value: string) => void;
    const waiting = answerWithin(new Promise<string>((resolve) => (answer = resolve)), 60_000, 'no answer');
    expect(activeTimers()).toBe(before);
    answer('ok');
    await expect(waiting).resolves.toBe('ok');
  });
});

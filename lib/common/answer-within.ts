/**
 * `answer`, or a rejection saying `<noAnswer> within <ms> ms` once `ms` have passed without it. The timer
 * is unref'd: a wait left behind (an app that fails to start for another reason meanwhile) holds no
 * process open.
 */
export async function answerWithin<T>(answer: Promise<T>, ms: number, noAnswer: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${noAnswer} within ${ms} ms`)), ms).unref();
  });
  try {
    return await Promise.race([answer, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

import type { ChildProcess } from 'node:child_process';

/** Registers `child` to be SIGKILLed when this process exits (whatever failed before); returns it. */
export function killOnExit<T extends ChildProcess>(child: T): T;

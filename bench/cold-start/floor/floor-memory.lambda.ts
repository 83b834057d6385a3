// The bare Nest floor with no shared store: nothing claimed (a process's memory is no dedup store).
import { floorHandler } from './nest-floor';

export const handler = floorHandler();

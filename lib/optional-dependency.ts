import { createRequire } from 'node:module';

/**
 * Loads an optional peer dependency only when a feature that needs it runs, so an app that does
 * not use that feature does not have to install it. Resolved from the app's working directory as a
 * fallback, for builds where this file has no `__filename`.
 */
export function loadOptionalDependency<T>(name: string): T | undefined {
  try {
    const base = typeof __filename === 'string' ? __filename : `${process.cwd()}/`;
    return createRequire(base)(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** The markers of a README code block (an HTML comment on the line before its fence). */
export interface ReadmeMarkers {
  /** Not a whole file: not checked, unless it says what it needs. */
  fragment: boolean;
  /** Identifiers a fragment uses without declaring them (declared as `any`). */
  needs: string[];
  /** Modules a fragment imports that may not be installed (declared untyped then). */
  needsModules: string[];
  /** Run as Jest tests by `npm test`. */
  jest: boolean;
  /** Compat recipe steps (`nest11/install`, `nest12/jest.config.js`, ...). */
  recipes: string[];
}

/** One fenced code block of README.md. */
export interface ReadmeBlock {
  /** README line of the opening fence (1-based). */
  fenceLine: number;
  /** README line of the first line of code. */
  line: number;
  /** The fence's language (`ts`, `bash`, `js`, `json`, or ''). */
  lang: string;
  /** The code, without the indentation of a list item. */
  code: string;
  /** The path its first line names (`// src/app.module.ts`). */
  path: string | undefined;
  markers: ReadmeMarkers;
  /** What is wrong with its marker, if anything. */
  markerErrors: string[];
}

/** Every fenced code block of a Markdown text, in order. */
export function readmeBlocks(markdown: string): ReadmeBlock[];
/** The shell commands of a `bash` block: one per line, comments and blank lines dropped. */
export function shellCommands(code: string): string[];

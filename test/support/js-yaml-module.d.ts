// js-yaml's types are a separate package: the part of its API the specs use.
declare module 'js-yaml' {
  export class Type {
    constructor(
      tag: string,
      options: { kind: 'scalar' | 'sequence' | 'mapping'; construct?(data: any): unknown },
    );
  }
  export class Schema {
    extend(types: Type[]): Schema;
  }
  export const DEFAULT_SCHEMA: Schema;
  export function load(text: string, options?: { schema?: Schema }): unknown;
}

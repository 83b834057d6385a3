/** Field readers shared by the envelope readers: an envelope's required fields are checked, not trusted. */

/** `body[name]` when it is a non-empty string. */
export function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `body[name]` as a string, or the reason it is not one (for the record's error). */
export function requireString(body: Record<string, unknown>, name: string, envelope: string): string {
  const value = stringField(body, name);
  if (value === undefined) throw notEnvelope(envelope, name, body[name], 'a non-empty string');
  return value;
}

/** The reason a body is not `envelope`: its field `name` holds `value`, not what the envelope has there. */
export function notEnvelope(envelope: string, name: string, value: unknown, expected: string): Error {
  return new Error(`the body is not ${envelope}: its "${name}" is ${describe(value)}, not ${expected}`);
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
}

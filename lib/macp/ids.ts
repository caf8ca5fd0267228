// Session and message identifiers (PROTOCOL.md §2.5, §2.6). Pure.

/** Anything shaped like a UUID (8-4-4-4-12 hex digits), in any case. */
const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** Canonical lowercase hyphenated UUID of version 4 or 7. */
const UUID_V4_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** base64url alphabet, 22 characters or more (≥128 bits). */
const BASE64URL_22 = /^[A-Za-z0-9_-]{22,}$/;

/**
 * Whether `id` is an acceptable SessionStart session id (§2.6):
 * - a canonical lowercase UUID v4 or v7 (36 characters), or
 * - 22+ characters of `[A-Za-z0-9_-]`.
 *
 * A string shaped like a UUID is judged by the UUID rule only, so an
 * uppercase UUID or a UUID of another version is rejected even though its
 * characters would otherwise fit the base64url alphabet.
 */
export function isValidSessionId(id: string): boolean {
  if (UUID_SHAPE.test(id)) return UUID_V4_V7.test(id);
  return BASE64URL_22.test(id);
}

/** A fresh session id: random UUID v4 in canonical lowercase form. */
export function newSessionId(): string {
  return globalThis.crypto.randomUUID();
}

/** A fresh message id: random UUID v4. */
export function newMessageId(): string {
  return globalThis.crypto.randomUUID();
}

// Participant ids and how reasons name them: the id shape rule the runtime
// applies, the short display of an id, and the small text helpers reasons use.

export const MAX_PARTICIPANT_ID = 512;
/** Same shape rule the runtime applies to identities: non-empty, bounded, no whitespace or control characters. */
export function isValidParticipantId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_PARTICIPANT_ID && !/[\s\u0000-\u001f\u007f]/.test(id) && id !== "_runtime";
}

const PREFIXES = ["human:", "agent://", "agent:", "user:"];

/** Default display of a participant id: without a conventional prefix. */
export function shortParticipantName(id: string): string {
  for (const p of PREFIXES) if (id.startsWith(p) && id.length > p.length) return id.slice(p.length);
  return id;
}

export function capitalize(s: string): string {
  return s.length > 0 ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

export function joinOr(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

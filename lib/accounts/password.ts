// Password hashing with scrypt (node:crypto), stored as
//   scrypt$<N>$<r>$<p>$<salt, base64url>$<hash, base64url>
// with a random 16-byte salt and a 32-byte derived key. Verification is
// constant-time, and `verifyAgainstNothing` spends the same work for unknown
// users so response times do not reveal which usernames exist.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** Production cost: N=2^15, r=8, p=1 (≈32 MiB, tens of milliseconds). */
export const DEFAULT_SCRYPT: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });
/** Cheap parameters for tests only. */
export const TEST_SCRYPT: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 10, r: 8, p: 1 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Bounds accepted when parsing stored hashes, so a tampered file cannot ask for gigabytes. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, params: ScryptParams, keyBytes = KEY_BYTES): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    // Node's default maxmem (32 MiB) is just too small for N=2^15, r=8.
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize("NFC"), salt, keyBytes, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 1 && (n & (n - 1)) === 0;
}

export function validateScryptParams(params: ScryptParams): string | null {
  if (!isPowerOfTwo(params.N) || params.N > MAX_N) return `N must be a power of two between 2 and ${MAX_N}`;
  if (!Number.isInteger(params.r) || params.r < 1 || params.r > MAX_R) return `r must be an integer from 1 to ${MAX_R}`;
  if (!Number.isInteger(params.p) || params.p < 1 || params.p > MAX_P) return `p must be an integer from 1 to ${MAX_P}`;
  return null;
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const bad = validateScryptParams(params);
  if (bad) throw new Error(`invalid scrypt parameters: ${bad}`);
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** Parse a stored hash; returns an error text when it is not a valid scrypt hash. */
export function parsePasswordHash(encoded: string): ParsedHash | { error: string } {
  const parts = encoded.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return { error: 'must look like "scrypt$N$r$p$salt$hash"' };
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((x) => /^[0-9]{1,8}$/.test(x))) return { error: "N, r and p must be decimal integers" };
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const bad = validateScryptParams(params);
  if (bad) return { error: bad };
  if (!B64URL.test(salt) || !B64URL.test(key)) return { error: "salt and hash must be base64url" };
  const saltBuf = Buffer.from(salt, "base64url");
  const keyBuf = Buffer.from(key, "base64url");
  if (saltBuf.length < 16) return { error: "salt must be at least 16 bytes" };
  if (keyBuf.length < 16 || keyBuf.length > 64) return { error: "hash must be 16 to 64 bytes" };
  return { params, salt: saltBuf, key: keyBuf };
}

/** Constant-time check of `password` against a stored hash; false for malformed hashes. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parsePasswordHash(encoded);
  if ("error" in parsed) return false;
  const candidate = await scrypt(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(candidate, parsed.key);
}

const dummies = new Map<string, Promise<string>>();

/**
 * Spend the same scrypt work as a real verification and return false. Used
 * for unknown or disabled users so that timing does not reveal them.
 */
export async function verifyAgainstNothing(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<false> {
  const key = `${params.N}/${params.r}/${params.p}`;
  let dummy = dummies.get(key);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString("base64url"), params);
    dummies.set(key, dummy);
  }
  await verifyPassword(password, await dummy);
  return false;
}

/** A random password for bootstrap and `users add` without --password-stdin: 20 characters from a 57-symbol alphabet (~116 bits). */
export function generatePassword(length = 20): string {
  // No look-alikes (0/O, 1/l/I) so it can be read off a terminal at 3 a.m.
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  const out: string[] = [];
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      // Rejection sampling keeps the distribution uniform.
      if (b < 256 - (256 % alphabet.length)) out.push(alphabet[b % alphabet.length] as string);
      if (out.length === length) break;
    }
  }
  return out.join("");
}

/** Problems with a password a person chose; null when acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Passwords can have at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (password.trim() === "") return "Passwords can't be only spaces.";
  if (/[\u0000-\u001f\u007f]/.test(password)) return "Passwords can't contain control characters.";
  return null;
}

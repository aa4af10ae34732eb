/**
 * Bearer-token check for the TCP listener: every request must carry
 * `Authorization: Bearer <token>`, except `GET /health`, which without it
 * answers only that the daemon is up (where its files are and its pid are
 * for those who hold the token). The comparison takes the same time
 * wherever the tokens differ.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";

const encoder = new TextEncoder();

/**
 * Compares two strings in time that depends only on the length of `given`.
 *
 * @example
 * ```ts
 * import { timingSafeEqualString } from "./_auth.ts";
 * timingSafeEqualString("abc", "abd"); // false
 * ```
 */
export function timingSafeEqualString(
  given: string,
  expected: string,
): boolean {
  const a = encoder.encode(given);
  const b = encoder.encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ (b[i % b.length] ?? 0);
  return diff === 0;
}

/**
 * Middleware refusing requests without the bearer token.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { bearerToken } from "./_auth.ts";
 * new Hono().use("*", bearerToken("s3cret"));
 * ```
 */
export function bearerToken(token: string): MiddlewareHandler {
  return async (c, next) => {
    const health = c.req.path === "/health" &&
      (c.req.method === "GET" || c.req.method === "HEAD");
    const match = /^Bearer +(\S+) *$/i.exec(
      c.req.header("Authorization") ?? "",
    );
    if (match !== null && timingSafeEqualString(match[1], token)) {
      return await next();
    }
    if (health) return c.json({ ok: true });
    c.header("WWW-Authenticate", 'Bearer realm="stompwatch"');
    return c.json({
      error:
        "Missing or wrong bearer token: read it from OUT/token and send Authorization: Bearer <token>",
    }, 401);
  };
}

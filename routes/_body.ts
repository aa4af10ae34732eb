/**
 * Reading request bodies and query strings at the edge: a body must be one
 * JSON object with only known fields (whatever the Content-Type, since
 * `curl -d` sends form encoding), and a query only known parameters.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { badRequest, HttpError } from "./_errors.ts";

/** The largest request body the API reads; every body it takes is a few hundred bytes. */
export const MAX_BODY_BYTES = 1 << 20;

/**
 * How long a body may take to arrive, from the first read: a client that
 * sends a Content-Length and then (almost) nothing would hold its
 * connection, and the memory behind it, for ever.
 */
export const BODY_TIMEOUT_MS = 10_000;

function tooLarge(what: string): never {
  throw new HttpError(
    413,
    `Request body too large: ${what}, at most ${MAX_BODY_BYTES} bytes are read; send one small JSON object`,
  );
}

/**
 * Middleware refusing a body whose Content-Length is over
 * {@linkcode MAX_BODY_BYTES} before any of it is read. Bodies sent without
 * a length (chunked) are capped as they are read, by
 * {@linkcode readJsonObject}.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { bodyLimit } from "./_body.ts";
 * new Hono().use("*", bodyLimit());
 * ```
 */
export function bodyLimit(): MiddlewareHandler {
  return async (c, next) => {
    const length = c.req.header("Content-Length");
    if (length !== undefined && !(Number(length) <= MAX_BODY_BYTES)) {
      tooLarge(`Content-Length is ${length}`);
    }
    return await next();
  };
}

/**
 * The body as text, reading at most {@linkcode MAX_BODY_BYTES}: a longer one
 * is refused as soon as the cap is passed, whatever Content-Length said,
 * and one not whole within {@linkcode BODY_TIMEOUT_MS} is refused with 408.
 */
async function readCapped(c: Context): Promise<string> {
  const body = c.req.raw.body;
  if (body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), BODY_TIMEOUT_MS);
  });
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array> | "late";
    try {
      read = await Promise.race([reader.read(), late]);
    } catch (e) {
      clearTimeout(timer);
      throw e;
    }
    if (read === "late") {
      reader.cancel().catch(() => {});
      throw new HttpError(
        408,
        `Request body not received in time: ${size} bytes came in ${
          BODY_TIMEOUT_MS / 1000
        } s; send the whole body at once`,
      );
    }
    const { done, value } = read;
    if (done) break;
    size += value.length;
    if (size > MAX_BODY_BYTES) {
      clearTimeout(timer);
      await reader.cancel();
      tooLarge("it runs past the limit");
    }
    chunks.push(value);
  }
  clearTimeout(timer);
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The body as a JSON object holding only `fields`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { readJsonObject } from "./_body.ts";
 * new Hono().post("/remove", async (c) => c.json(await readJsonObject(c, ["name", "pid"])));
 * ```
 */
export async function readJsonObject(
  c: Context,
  fields: readonly string[],
): Promise<Record<string, unknown>> {
  const route = `${c.req.method} ${c.req.path}`;
  const text = await readCapped(c);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    const detail = text.trim() === ""
      ? "the body is empty"
      : (error as Error).message;
    badRequest(
      `Body is not JSON: ${detail}; ${route} takes a JSON object with fields ${
        fields.join(", ")
      }`,
    );
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    badRequest(
      `Body is not a JSON object: got ${kindOf(body)}; ${route} takes fields ${
        fields.join(", ")
      }`,
    );
  }
  checkKnown(Object.keys(body), fields, "field", route);
  return body as Record<string, unknown>;
}

/**
 * The query parameters, refusing any not in `names` or given twice.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { readQuery } from "./_body.ts";
 * new Hono().get("/dumps", (c) => c.json(readQuery(c, ["name", "op", "pid"])));
 * ```
 */
export function readQuery(
  c: Context,
  names: readonly string[],
): Record<string, string | undefined> {
  const route = `${c.req.method} ${c.req.path}`;
  const query = c.req.queries();
  checkKnown(Object.keys(query), names, "query parameter", route);
  const result: Record<string, string | undefined> = {};
  for (const [name, values] of Object.entries(query)) {
    if (values.length > 1) {
      badRequest(`Repeated query parameter: ${name}; give it once`);
    }
    result[name] = values[0];
  }
  return result;
}

/**
 * What a JSON value is, for messages.
 *
 * @example
 * ```ts
 * import { kindOf } from "./_body.ts";
 * kindOf([]); // "an array"
 * ```
 */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "number" && !Number.isFinite(value)) {
    return jsonText(value);
  }
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * A JSON value as given, for messages: a number too large for a double
 * (`1e400`), which JSON.parse reads as Infinity and JSON.stringify would
 * show as `null`, is said to be that.
 *
 * @example
 * ```ts
 * import { jsonText } from "./_body.ts";
 * jsonText(JSON.parse("1e400")); // "a number too large to hold (it reads as Infinity)"
 * ```
 */
export function jsonText(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) {
    return `a number too large to hold (it reads as ${value})`;
  }
  return JSON.stringify(value) ?? String(value);
}

function checkKnown(
  keys: string[],
  known: readonly string[],
  what: string,
  route: string,
): void {
  const accepts = known.length === 0
    ? `takes no ${what}s`
    : `accepts ${known.join(", ")}`;
  for (const key of keys) {
    if (!known.includes(key)) {
      badRequest(
        `Unknown ${what}: ${JSON.stringify(key)}; ${route} ${accepts}`,
      );
    }
  }
}

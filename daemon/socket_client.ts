/**
 * A small JSON client for the daemon's Unix socket, for `run --daemon` and
 * the tests.
 *
 * @module
 */

/** A response: status and parsed JSON body (or text when not JSON). */
export interface SocketResponse {
  status: number;
  body: unknown;
}

/**
 * How long a request may take before the daemon counts as not answering: a
 * daemon that is stopped (SIGSTOP, a debugger) still accepts connections
 * but never replies, and `run` or `env` must not wait for it forever.
 */
export const REQUEST_TIMEOUT_MS = 5_000;

/**
 * Sends one request to the daemon behind `socket`; rejects when it does not
 * answer within `options.timeoutMs` (default {@linkcode REQUEST_TIMEOUT_MS}).
 *
 * @example
 * ```ts
 * import { requestSocket } from "./socket_client.ts";
 * const r = await requestSocket("/tmp/out/stompwatch.sock", "GET", "/health");
 * ```
 */
export async function requestSocket(
  socket: string,
  method: string,
  path: string,
  body?: unknown,
  options: { timeoutMs?: number } = {},
): Promise<SocketResponse> {
  const client = Deno.createHttpClient(
    { proxy: { transport: "unix", path: socket } } as never,
  );
  try {
    const response = await fetch(`http://localhost${path}`, {
      client,
      method,
      signal: AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS),
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined
        ? undefined
        : typeof body === "string"
        ? body
        : JSON.stringify(body),
    } as RequestInit);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: response.status, body: parsed };
  } finally {
    client.close();
  }
}

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
 * Sends one request to the daemon behind `socket`.
 *
 * @example
 * ```ts
 * const r = await requestSocket("/tmp/out/stompwatch.sock", "GET", "/health");
 * ```
 */
export async function requestSocket(
  socket: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<SocketResponse> {
  const client = Deno.createHttpClient(
    { proxy: { transport: "unix", path: socket } } as never,
  );
  try {
    const response = await fetch(`http://localhost${path}`, {
      client,
      method,
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

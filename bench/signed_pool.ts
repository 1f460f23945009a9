/**
 * Pre-signed payment initiations for wrk: the signature covers the X-Request-ID, so wrk cannot
 * make a fresh one per request. A pool of requests with distinct ids is signed before a round
 * (within the gateway's signing-time window) and written to a file that bench/wrk.lua cycles.
 */
import type { SignedPostFixture } from "../tests/support/signing.ts";

/** One kind of request the load generator sends. */
export interface RequestShape {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A file of pre-signed (X-Request-ID, x-jws-signature) pairs that wrk cycles. */
  pool?: string;
}

/** The fixture's signed payment initiation as a wrk request shape. */
export async function signedShape(fixture: SignedPostFixture): Promise<RequestShape> {
  const { path, init } = await fixture.request();
  return {
    method: "POST",
    path,
    headers: Object.fromEntries(new Headers(init.headers)),
    body: init.body as string,
  };
}

/**
 * `count` signed requests (same body, distinct X-Request-IDs, signed now) written to `file`; the
 * shape of the first, with `pool` naming the file. Signing runs 64 at a time (about 1.3 ms each
 * on the 2-core machine).
 */
export async function signedPool(
  fixture: SignedPostFixture,
  count: number,
  file: string,
): Promise<RequestShape> {
  const lines: string[] = [];
  let first: RequestShape | undefined;
  while (lines.length < count) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(64, count - lines.length) }, () => signedShape(fixture)),
    );
    first ??= batch[0];
    for (const shape of batch) {
      lines.push(`${shape.headers["x-request-id"]}\t${shape.headers["x-jws-signature"]}`);
    }
  }
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
  return { ...first!, pool: file };
}

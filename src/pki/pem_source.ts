/**
 * Certificates named in the policy file: inline PEM text or the path of a PEM file, read and
 * checked when the policy is loaded, so that a missing or bad file stops start-up with its path.
 */
import { z } from "zod";
import { certificateBytes, pemBodies } from "./pem.ts";
import { x509 } from "./x509.ts";
import { policyFileText } from "../lib/policy_files.ts";

/** A policy string: inline PEM, or the path of a PEM file (one or more certificates). */
export const pemSource = z.string().min(1).describe(
  "A PEM file path (relative to the working directory), or inline PEM text",
);

/** The DER certificates of one PEM source; problems are reported as zod issues. */
export function readPemSource(
  source: string,
  ctx: z.RefinementCtx,
  path: (string | number)[],
): Uint8Array<ArrayBuffer>[] {
  let text = source;
  const where = source.includes("-----BEGIN") ? "inline PEM" : `file "${source}"`;
  if (!source.includes("-----BEGIN")) {
    try {
      text = policyFileText(source); // read ahead: no synchronous read on Deno Deploy
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `cannot read ${where}: ${(error as Error).message}`,
      });
      return [];
    }
  }
  const bodies = pemBodies(text);
  if (bodies.length === 0) {
    ctx.addIssue({ code: "custom", path, message: `${where} holds no PEM certificate` });
    return [];
  }
  const { X509Certificate } = x509();
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (const [i, body] of bodies.entries()) {
    try {
      const der = certificateBytes(body);
      new X509Certificate(der);
      out.push(der);
    } catch {
      ctx.addIssue({
        code: "custom",
        path,
        message: `certificate ${i + 1} of ${where} is not a valid X.509 certificate`,
      });
    }
  }
  return out;
}

/** A list of PEM sources, read into DER certificates at load. */
export function pemList(description: string) {
  return z.array(pemSource).default([]).describe(description);
}

/**
 * `POST /sandbox/ca/certificates`: `deno task tpp:certificate` over HTTP, for testers who reach
 * the sandbox but not its machine. The body names what the certificate carries:
 *
 * ```json
 * {"type": "QWAC", "organisationId": "PSDGE-NBG-777001", "roles": ["PSP_PI", "PSP_AI"],
 *  "name": "Example TPP", "domains": ["tpp.example"], "keyType": "RSA", "days": 365}
 * ```
 *
 * and the answer (201) carries the certificate and its private key as PEM: a test key, made for
 * the tester, as adorsys's sandbox certificate generator hands it out. The certificate names this
 * sandbox's own CRL (the origin the request came to), and the TPP is added to the sandbox's
 * register file when the sandbox may write its directory (`deno task start` may, under `data/`;
 * `deno task sandbox` may not, and the answer says so). The CA must exist (404 otherwise:
 * `deno task tpp:certificate` makes it).
 */
import type { Context, Hono } from "hono";
import { z } from "zod";
import { issueTppCertificate, loadSandboxCa, ORGANIZATION_ID } from "../pki/sandbox_ca.ts";
import { ROLE_NAMES } from "../pki/qc_names.ts";
import { registerTpp } from "../cli/tpp_certificate.ts";
import { formatError, SandboxError } from "./errors.ts";
import { readJsonObject } from "./request.ts";

const REQUEST = z.object({
  type: z.string().transform((type, context) => {
    if (type.toLowerCase() === "qwac") return "QWAC" as const;
    if (type.toLowerCase() === "qsealc") return "QSealC" as const;
    context.addIssue({ code: "custom", message: 'must be "QWAC" or "QSealC"' });
    return z.NEVER;
  }),
  organisationId: z.string().regex(ORGANIZATION_ID, "must look like PSDGE-NBG-123456"),
  roles: z.array(z.enum(ROLE_NAMES)).min(1),
  name: z.string().min(1).max(64).optional(),
  domains: z.array(z.string().regex(/^[A-Za-z0-9*.-]{1,253}$/, "must be a DNS name")).max(10)
    .optional(),
  keyType: z.enum(["RSA", "EC"]).default("RSA"),
  days: z.int().min(1).max(3650).default(365),
}).strict();

/** Mounts the issuing endpoint; the CA is in `dir`. */
export function mountCaIssuing(app: Hono, dir: string) {
  app.post("/sandbox/ca/certificates", async (c: Context) => {
    const parsed = REQUEST.safeParse(await readJsonObject(c));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue.path.join(".");
      throw formatError(path ? `Field "${path}": ${issue.message}` : issue.message, path);
    }
    const wanted = parsed.data;
    let ca;
    try {
      ca = await loadSandboxCa(dir);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      throw new SandboxError(404, "RESOURCE_UNKNOWN", {
        text:
          `The sandbox CA has not been made yet in "${dir}": run deno task tpp:certificate to make it`,
      });
    }
    const name = wanted.name ?? `Test TPP ${wanted.organisationId}`;
    const issued = await issueTppCertificate(ca, {
      type: wanted.type,
      orgId: wanted.organisationId,
      roles: wanted.roles,
      organisation: name,
      domains: wanted.domains,
      crlUrl: `${new URL(c.req.url).origin}/sandbox/ca/crl`,
      days: wanted.days,
      keyType: wanted.keyType,
    });
    const file = `${dir}/tpp_register.json`;
    let register: Record<string, string> = { register: file };
    try {
      await registerTpp(file, { orgId: wanted.organisationId, name, roles: wanted.roles });
    } catch (error) {
      if (
        !(error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied)
      ) {
        throw error;
      }
      // `deno task sandbox` may read its directory only: the certificate is still good.
      register = {
        registerNotWritten:
          `The sandbox may not write "${file}", so the TPP is not in its register: run it with --allow-write or use deno task tpp:certificate`,
      };
    }
    return c.json({
      type: wanted.type,
      organisationId: wanted.organisationId,
      serial: issued.serial,
      certificate: issued.certificate,
      key: issued.key,
      ...register,
    }, 201);
  });
}

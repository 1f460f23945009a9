/**
 * `deno task tpp:certificate --org PSDGE-NBG-123456 --roles PSP_PI,PSP_AI --type qwac --out tpp/`:
 * a test eIDAS certificate for a TPP from the sandbox CA (src/pki/sandbox_ca.ts), for a staging
 * gateway that runs the production policy with that CA as its only trust anchor.
 *
 * The CA is made on first use in `--ca-dir` (default `data/sandbox-ca`: `qtsp-ca.pem` to give as
 * QTSP_CA_BUNDLE, `qtsp-ca.key`) and kept. Each certificate names the sandbox bank's CRL
 * (`--crl-url`, default `http://127.0.0.1:$SANDBOX_PORT/sandbox/ca/crl`, which the sandbox bank
 * serves from the same directory), so that revocation `hard` finds a status; and its TPP is
 * added to `<ca-dir>/tpp_register.json` (the register to give as TPP_REGISTER_URL) with the
 * services its roles name. Writes `<out>/<type>.pem` and `<out>/<type>.key` (PKCS#8, owner-only)
 * and prints one JSON line saying where.
 */
import { parseArgs } from "node:util";
import { makeTestCa } from "./test_ca.ts";
import { runTool, UsageError } from "./tool.ts";
import {
  issueTppCertificate,
  loadSandboxCa,
  orgCountry,
  type TppCertificateType,
} from "../pki/sandbox_ca.ts";
import { ROLE_NAMES, type RoleName } from "../pki/qc_names.ts";
import { type RegisterEntry, registerFile, type RegisterService } from "../pki/register.ts";

/** Where the sandbox CA lives unless `--ca-dir` says otherwise. */
export const SANDBOX_CA_DIR = "data/sandbox-ca";

const USAGE = `usage: deno task tpp:certificate --org PSDGE-NBG-123456 --roles PSP_PI,PSP_AI
         --type qwac|qsealc [--out DIR] [--ca-dir ${SANDBOX_CA_DIR}] [--name "Example TPP"]
         [--domain tpp.example ...] [--crl-url URL] [--days 365] [--key rsa|ec] [--passport GE]`;

/** The register's service of each PSD2 role (PSP_AS, the bank's own role, has none). */
const SERVICES: Partial<Record<RoleName, RegisterService>> = {
  PSP_PI: "PIS",
  PSP_AI: "AIS",
  PSP_IC: "PIIS",
};

/** The type a `--type` value names. */
function typeOf(value: string | undefined): TppCertificateType {
  if (value?.toLowerCase() === "qwac") return "QWAC";
  if (value?.toLowerCase() === "qsealc") return "QSealC";
  throw new UsageError(`Option "--type" must be qwac or qsealc, got "${value ?? ""}"`);
}

/** The roles a `--roles` value names. */
function rolesOf(value: string | undefined): RoleName[] {
  const roles = (value ?? "").split(",").map((role) => role.trim()).filter(Boolean);
  if (roles.length === 0) throw new UsageError(`Option "--roles" must name at least one role`);
  for (const role of roles) {
    if (!(ROLE_NAMES as readonly string[]).includes(role)) {
      throw new UsageError(
        `Option "--roles" names "${role}"; roles: ${ROLE_NAMES.join(", ")}`,
      );
    }
  }
  return roles as RoleName[];
}

/**
 * Adds or replaces the TPP's entry in the sandbox's register file: authorised (registered when
 * it offers AIS only) in the identifier's country for its roles' services, passported to
 * `passport` when given.
 */
export async function registerTpp(
  file: string,
  tpp: { orgId: string; name: string; roles: readonly RoleName[]; passport?: string },
): Promise<void> {
  let entries: RegisterEntry[] = [];
  try {
    entries = registerFile.parse(JSON.parse(await Deno.readTextFile(file))).entries;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const services = [...new Set(tpp.roles.flatMap((role) => SERVICES[role] ?? []))];
  const entry: RegisterEntry = {
    id: tpp.orgId,
    name: tpp.name,
    country: orgCountry(tpp.orgId),
    status: services.some((service) => service !== "AIS") ? "authorised" : "registered",
    services,
    ...(tpp.passport ? { passports: { [tpp.passport]: services } } : {}),
  };
  const kept = entries.filter((e) => e.id !== tpp.orgId);
  const text = JSON.stringify({ updated: new Date().toISOString(), entries: [...kept, entry] });
  await Deno.writeTextFile(`${file}.tmp`, text + "\n");
  await Deno.rename(`${file}.tmp`, file);
}

/** Runs the command; resolves to what it printed (one JSON object). */
export async function tppCertificate(args: string[]): Promise<Record<string, unknown>> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        org: { type: "string" },
        roles: { type: "string" },
        type: { type: "string" },
        out: { type: "string", default: "." },
        "ca-dir": { type: "string", default: SANDBOX_CA_DIR },
        name: { type: "string" },
        domain: { type: "string", multiple: true },
        "crl-url": { type: "string" },
        days: { type: "string", default: "365" },
        key: { type: "string", default: "rsa" },
        passport: { type: "string" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!values.org) throw new UsageError(`Option "--org" is required`);
  try {
    orgCountry(values.org);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const type = typeOf(values.type);
  const roles = rolesOf(values.roles);
  const days = Number(values.days);
  if (!Number.isInteger(days) || days < 1 || days > 3650) {
    throw new UsageError(`Option "--days" must be an integer from 1 to 3650`);
  }
  if (values.key !== "rsa" && values.key !== "ec") {
    throw new UsageError(`Option "--key" must be rsa or ec, got "${values.key}"`);
  }
  if (values.passport !== undefined && !/^[A-Z]{2}$/.test(values.passport)) {
    throw new UsageError(`Option "--passport" must be a country code like GE`);
  }
  const caDir = values["ca-dir"];
  await Deno.mkdir(caDir, { recursive: true });
  const madeCa = await makeTestCa(caDir, "Sandbox QTSP CA");
  const ca = await loadSandboxCa(caDir);
  const port = Deno.env.get("SANDBOX_PORT") || "8081";
  const name = values.name ?? `Test TPP ${values.org}`;
  const issued = await issueTppCertificate(ca, {
    type,
    orgId: values.org,
    roles,
    organisation: name,
    domains: values.domain,
    crlUrl: values["crl-url"] ?? `http://127.0.0.1:${port}/sandbox/ca/crl`,
    days,
    keyType: values.key === "ec" ? "EC" : "RSA",
  });
  await Deno.mkdir(values.out, { recursive: true });
  const stem = `${values.out}/${type.toLowerCase()}`;
  await Deno.writeTextFile(`${stem}.key`, issued.key, { mode: 0o600 });
  await Deno.chmod(`${stem}.key`, 0o600);
  await Deno.writeTextFile(`${stem}.pem`, issued.certificate);
  const register = `${caDir}/tpp_register.json`;
  await registerTpp(register, { orgId: values.org, name, roles, passport: values.passport });
  return {
    msg: `${type} issued`,
    certificate: `${stem}.pem`,
    key: `${stem}.key`,
    serial: issued.serial,
    org: values.org,
    roles,
    ca: `${caDir}/qtsp-ca.pem`,
    ca_made: madeCa,
    register,
  };
}

if (import.meta.main) {
  await runTool(async () => JSON.stringify(await tppCertificate(Deno.args)), USAGE);
}

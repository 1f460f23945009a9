/**
 * `deno task policy:sign --key <private key> <policy file> [--out <signature file>]`: writes the
 * detached JWS over the policy file's bytes that the gateway verifies when GATEWAY_POLICY_KEY
 * names the public key (src/policy/signature.ts), to `<policy file>.sig` unless `--out` says
 * otherwise. The key is a private JWK or a PKCS#8 PEM (Ed25519, P-256, P-384 or RSA), for example
 * `openssl genpkey -algorithm ed25519 -out policy_signing.pem`, whose public half
 * (`openssl pkey -in policy_signing.pem -pubout`) the deployment holds.
 */
import { CompactSign, importJWK } from "jose";
import { keyAlgorithm, keyFileJwk } from "../policy/signature.ts";

const USAGE = "usage: deno task policy:sign --key <private key> <policy file> [--out <file>]";

/** The detached JWS (`<header>..<signature>`) of `bytes` under a private key file's text. */
export async function signPolicy(bytes: Uint8Array, keyText: string): Promise<string> {
  const jwk = keyFileJwk(keyText, { private: true });
  if (!jwk.d) throw new Error("the key must be a private key");
  const alg = keyAlgorithm(jwk);
  const header = { alg, ...(jwk.kid ? { kid: jwk.kid } : {}) };
  const jws = await new CompactSign(bytes).setProtectedHeader(header).sign(
    await importJWK(jwk, alg),
  );
  const [protectedHeader, , signature] = jws.split(".");
  return `${protectedHeader}..${signature}`;
}

/** Signs the policy file named in `args`; returns the exit code. */
export async function policySign(args: string[]): Promise<number> {
  const rest = [...args];
  const take = (flag: string) => {
    const at = rest.indexOf(flag);
    return at < 0 ? undefined : rest.splice(at, 2)[1] ?? "";
  };
  const key = take("--key");
  const out = take("--out");
  if (!key || out === "" || rest.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const [file] = rest;
  try {
    const signature = await signPolicy(await Deno.readFile(file), await Deno.readTextFile(key));
    await Deno.writeTextFile(out ?? `${file}.sig`, `${signature}\n`);
    console.log(`signed ${file}: ${out ?? `${file}.sig`}`);
    return 0;
  } catch (error) {
    console.error(`cannot sign "${file}": ${(error as Error).message}`);
    return 1;
  }
}

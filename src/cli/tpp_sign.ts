/**
 * `deno task tpp:sign --cert tpp/qsealc.pem --key tpp/qsealc.key --scheme jws --method POST
 * --path /v1/payments/domestic --body payment.json --header PSU-ID=PSU-OK`: signs a request as a
 * TPP does (src/signing/tpp_signer.ts) and prints the headers to send, one `Name: value` a line
 * (for `curl -H @file`), or with `--url` a whole curl command line.
 *
 * An X-Request-ID is made when none is given (every signature covers it), and Content-Type
 * `application/json` is sent with a body unless given. `--transport tpp/qwac.pem` adds the
 * transport certificate in the terminator's header (`--transport-header`, default
 * X-SSL-Client-Cert, URL-encoded PEM as nginx's `$ssl_client_escaped_cert`): in staging the
 * tester's client stands where the TLS terminator would.
 */
import { parseArgs } from "node:util";
import { loadTppSigner, signHttpRequest, signJwsRequest } from "../signing/tpp_signer.ts";
import { runTool, UsageError } from "./tool.ts";

const USAGE = `usage: deno task tpp:sign --cert FILE --key FILE --scheme jws|http --method POST
         --path /v1/payments/domestic [--body FILE] [--header Name=value ...]
         [--transport QWAC.pem] [--transport-header X-SSL-Client-Cert] [--url http://127.0.0.1:8080]`;

/** A string as one shell word (single quotes). */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Runs the command; resolves to the text it prints. */
export async function tppSign(args: string[]): Promise<string> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        cert: { type: "string" },
        key: { type: "string" },
        scheme: { type: "string", default: "jws" },
        method: { type: "string", default: "POST" },
        path: { type: "string" },
        body: { type: "string" },
        header: { type: "string", multiple: true, default: [] },
        transport: { type: "string" },
        "transport-header": { type: "string", default: "X-SSL-Client-Cert" },
        url: { type: "string" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!values.cert || !values.key) {
    throw new UsageError(`Options "--cert" and "--key" are required`);
  }
  if (!values.path?.startsWith("/")) {
    throw new UsageError(`Option "--path" must be a path like /v1/payments/domestic`);
  }
  if (values.scheme !== "jws" && values.scheme !== "http") {
    throw new UsageError(`Option "--scheme" must be jws or http, got "${values.scheme}"`);
  }
  const headers: Record<string, string> = {};
  for (const header of values.header) {
    const eq = header.indexOf("=");
    if (eq < 1) {
      throw new UsageError(`Option "--header" must look like Name=value, got "${header}"`);
    }
    headers[header.slice(0, eq).trim().toLowerCase()] = header.slice(eq + 1).trim();
  }
  const body = values.body === undefined ? new Uint8Array() : await Deno.readFile(values.body);
  headers["x-request-id"] ??= crypto.randomUUID();
  if (body.length > 0) headers["content-type"] ??= "application/json";
  const signer = await loadTppSigner(
    await Deno.readTextFile(values.cert),
    await Deno.readTextFile(values.key),
  );
  const request = { method: values.method.toUpperCase(), target: values.path, headers, body };
  const signed = values.scheme === "jws"
    ? await signJwsRequest(signer, request)
    : await signHttpRequest(signer, request);
  if (values.transport) {
    signed[values["transport-header"].toLowerCase()] = encodeURIComponent(
      await Deno.readTextFile(values.transport),
    );
  }
  if (!values.url) {
    return Object.entries(signed).map(([name, value]) => `${name}: ${value}`).join("\n");
  }
  const words = [
    "curl",
    "-si",
    "-X",
    request.method,
    shellWord(values.url.replace(/\/+$/, "") + values.path),
    ...Object.entries(signed).flatMap(([name, value]) => ["-H", shellWord(`${name}: ${value}`)]),
    ...(values.body === undefined ? [] : ["--data-binary", shellWord(`@${values.body}`)]),
  ];
  return words.join(" ");
}

if (import.meta.main) {
  await runTool(async () => await tppSign(Deno.args), USAGE);
}

/**
 * The periodic pain.001 initiation sent as multipart/form-data (Berlin Group): part `xml_sct` is
 * the pain.001 document, part `json_standingorderType` the standing order's schedule. Each part
 * is judged as the single forms are: its media type (XML, JSON; UTF-8), the XML well-formed, the
 * JSON scanned (duplicate keys, depth, controls) and held to the schedule schema.
 */
import type { z } from "zod";
import { formatError, GatewayError } from "../psd2/errors.ts";
import { parseMediaType } from "../lib/media_type.ts";
import { jsonProblem } from "./json_scan.ts";
import { parseBody } from "./issues.ts";
import { parseMultipart, type Part, validBoundary } from "./multipart.ts";
import { xmlProblem } from "./xml.ts";

/** The media type of the form. */
export const FORM_DATA = "multipart/form-data";

/** The two parts of the form and the media types each may declare. */
export const PERIODIC_PARTS = {
  xml_sct: ["application/xml", "text/xml"],
  json_standingorderType: ["application/json"],
} as const;

type PartName = keyof typeof PERIODIC_PARTS;

/** How the form is judged, from the `body_schema` options. */
export interface PeriodicFormOptions {
  /** The schedule schema of the JSON part. */
  schedule: z.ZodType;
  maxJsonDepth: number;
  maxXmlDepth: number;
  /** Let `xsi:schemaLocation` through in the XML part (as `body_schema` does for an XML body). */
  allowSchemaLocation?: boolean;
  /** Parts other than the two: rejected, or let through to the bank. */
  unknown: "reject" | "forward";
}

/** The boundary of a multipart/form-data Content-Type; 400 when it has none or a bad one. */
export function formBoundary(contentType: string | null): string {
  const boundary = contentType === null
    ? undefined
    : parseMediaType(contentType)?.params.get("boundary");
  if (boundary === undefined || !validBoundary(boundary)) {
    throw formatError(
      "Content-Type",
      'Header "Content-Type" must carry a boundary of 1 to 70 characters for multipart/form-data',
    );
  }
  return boundary;
}

/** A part that declares a media type must declare one of its own, in UTF-8 (415 otherwise). */
function checkPartType(part: Part, allowed: readonly string[]): void {
  if (part.contentType === undefined) return;
  const media = parseMediaType(part.contentType);
  const charset = media?.params.get("charset")?.toLowerCase();
  if (!media || !allowed.includes(media.essence) || (charset && charset !== "utf-8")) {
    throw new GatewayError(
      415,
      "CONTENT_TYPE_INVALID",
      `Part "${part.name}" must be ${allowed.map((t) => `"${t}"`).join(" or ")}, in UTF-8`,
      { path: part.name },
    );
  }
}

/** The JSON part, scanned and parsed as a JSON body is. */
function jsonPart(part: Part, options: PeriodicFormOptions): void {
  let value: unknown;
  try {
    value = JSON.parse(part.text);
  } catch {
    throw formatError(part.name, `Part "${part.name}" must be well-formed JSON`);
  }
  const scan = jsonProblem(part.text, options.maxJsonDepth);
  if (scan) {
    const path = scan.path === "body" ? part.name : `${part.name}.${scan.path}`;
    throw formatError(
      path,
      scan.path === "body"
        ? `Part "${part.name}" ${scan.problem}`
        : `Field "${path}" ${scan.problem}`,
    );
  }
  parseBody(options.schedule, value, part.name);
}

/**
 * Validates a periodic pain.001 form; throws the first problem as a Berlin Group error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { checkPeriodicForm, formBoundary } from "./periodic_form.ts";
 * import { GatewayError } from "../psd2/errors.ts";
 *
 * const options = {
 *   schedule: z.object({}),
 *   maxJsonDepth: 16,
 *   maxXmlDepth: 16,
 *   unknown: "reject",
 * } as const;
 * const form = '--b\r\nContent-Disposition: form-data; name="note"\r\n\r\nx\r\n--b--\r\n';
 * assert.throws(
 *   () => checkPeriodicForm(form, formBoundary("multipart/form-data; boundary=b"), options),
 *   (error) => error instanceof GatewayError && error.path === "note",
 * );
 * ```
 */
export function checkPeriodicForm(
  text: string,
  boundary: string,
  options: PeriodicFormOptions,
): void {
  const form = parseMultipart(text, boundary);
  if ("problem" in form) throw formatError("body", `The multipart body ${form.problem}`);
  const byName = new Map(form.parts.map((part) => [part.name, part]));
  for (const part of form.parts) {
    if (part.name in PERIODIC_PARTS || options.unknown === "forward") continue;
    throw formatError(
      part.name,
      `Part "${part.name}" is not a part of this form (expected xml_sct and json_standingorderType)`,
    );
  }
  for (const name of Object.keys(PERIODIC_PARTS) as PartName[]) {
    const part = byName.get(name);
    if (!part) throw formatError(name, `Part "${name}" is required`);
    checkPartType(part, PERIODIC_PARTS[name]);
  }
  const xml = byName.get("xml_sct")!;
  const problem = xmlProblem(xml.text, options.maxXmlDepth, {
    allowSchemaLocation: options.allowSchemaLocation,
  });
  if (problem) throw formatError(xml.name, `${problem} (part "${xml.name}")`);
  jsonPart(byName.get("json_standingorderType")!, options);
}

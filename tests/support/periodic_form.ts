/**
 * A periodic pain.001 initiation as multipart/form-data (Berlin Group): the pain.001 document in
 * part `xml_sct`, the schedule in part `json_standingorderType`. Tests change one part at a time.
 */
import { dayFromToday, PAIN_001 } from "./requests.ts";

/** The boundary the builder uses. */
export const FORM_BOUNDARY = "----xs2a-edge-7MA4YWxkTrZu0gW";

/** The Content-Type of a form built with {@link periodicForm}. */
export const FORM_TYPE = `multipart/form-data; boundary=${FORM_BOUNDARY}`;

/** A valid standing order schedule. */
export function standingOrderPart(): Record<string, unknown> {
  return {
    startDate: dayFromToday(1),
    endDate: dayFromToday(365),
    executionRule: "following",
    frequency: "MonthlyVariable",
    monthsOfExecution: ["1", "4", "7", "10"],
    dayOfExecution: "15",
  };
}

/** One part of a form: its headers and its content. */
export interface FormPart {
  name: string;
  contentType?: string;
  text: string;
}

/** The parts of a valid form. */
export function periodicParts(): FormPart[] {
  return [
    { name: "xml_sct", contentType: "application/xml", text: PAIN_001 },
    {
      name: "json_standingorderType",
      contentType: "application/json",
      text: JSON.stringify(standingOrderPart()),
    },
  ];
}

/** The body of a form with the given parts (a valid one by default). */
export function periodicForm(parts: FormPart[] = periodicParts()): string {
  return parts.map((part) =>
    `--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n` +
    (part.contentType ? `Content-Type: ${part.contentType}\r\n` : "") +
    `\r\n${part.text}\r\n`
  ).join("") + `--${FORM_BOUNDARY}--\r\n`;
}

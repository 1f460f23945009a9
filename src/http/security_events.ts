/**
 * Security events: each refusal for a security reason (certificate, signature, token, scope,
 * frequency, smuggling, replay, rate limit) is also one JSON line in the Elastic Common Schema
 * (ECS 8.11), built here, in one place, from the request's findings as the access log has them.
 *
 * The line goes to the access log's stream (stdout) and is told apart by `event.dataset:
 * "xs2a_edge.security"` (and `event.kind: "alert"`): one stream works wherever the gateway runs
 * (a container, each `deno serve` worker, Deno Deploy, which has stdout and stderr only), and log
 * shippers (Filebeat, Elastic Agent, Fluent Bit, Vector, the Splunk and Sentinel forwarders) route
 * a JSON line by a field without parsing rules. ECS rather than OCSF: a log line whose dotted
 * fields Elastic and OpenSearch index as they are and Splunk and Sentinel map by name, where
 * OCSF's class and type numbers are made for an ingestion pipeline (docs/policy_as_code.md).
 *
 * PSU data is masked as in the access log (the same masking functions); error texts, which may
 * quote what the TPP sent, are never copied.
 */
import type { Finding, GatewayContext } from "../core/check.ts";

/** The security reasons a refusal is an event for. */
export type SecurityReason =
  | "certificate"
  | "signature"
  | "token"
  | "scope"
  | "frequency"
  | "smuggling"
  | "replay"
  | "rate_limit";

/** The reason of each check whose refusals are security events. */
const REASONS: Readonly<Record<string, SecurityReason>> = {
  tpp_certificate: "certificate",
  tpp_uris: "certificate",
  signature_pairing: "signature",
  digest: "signature",
  jws_signature: "signature",
  http_signature: "signature",
  bearer_token: "token",
  authorization: "scope",
  consent_scope: "scope",
  basket_scope: "scope",
  consent_frequency: "frequency",
  body_limit: "smuggling",
  idempotency: "replay",
  rate_limit: "rate_limit",
};

/** ECS `event.category` of each reason. */
const CATEGORY: Readonly<Record<SecurityReason, string[]>> = {
  certificate: ["authentication"],
  signature: ["authentication"],
  token: ["authentication", "iam"],
  scope: ["iam"],
  frequency: ["web"],
  smuggling: ["intrusion_detection", "web"],
  replay: ["intrusion_detection", "web"],
  rate_limit: ["web"],
};

/** Headers that frame a request: a refusal about them is a smuggling attempt, whichever check. */
const FRAMING = new Set(["content-length", "transfer-encoding"]);

/** Codes that say someone tried, not erred: a forged, blocked or revoked credential. */
const HIGH = new Set([
  "CERTIFICATE_BLOCKED",
  "CERTIFICATE_REVOKED",
  "SIGNATURE_INVALID",
  "TOKEN_INVALID",
]);

/** Severity as Elastic's detection rules score it (`event.severity`) and its name. */
const SEVERITY = { low: 21, medium: 47, high: 73 } as const;
type Severity = keyof typeof SEVERITY;

/** The reason of a refusal, if it is a security one. */
export function securityReason(finding: Finding): SecurityReason | undefined {
  if (finding.path && FRAMING.has(finding.path.toLowerCase())) return "smuggling";
  // A body too large is a limit, not an attack on the framing.
  if (finding.check === "body_limit" && finding.status === 413) return undefined;
  return REASONS[finding.check];
}

/** Checks whose refusal is one TPP reaching for another's resources: always high. */
const SCOPES: ReadonlySet<string> = new Set(["consent_scope", "basket_scope"]);

function severityOf(reason: SecurityReason, finding: Finding): Severity {
  if (HIGH.has(finding.code) || reason === "smuggling" || SCOPES.has(finding.check)) {
    return "high";
  }
  return reason === "frequency" || reason === "rate_limit" ? "low" : "medium";
}

/** What the access log knows of the request, for the event. */
export interface RequestFacts {
  time: string;
  requestId: string;
  method: string;
  /** The path as the access log shows it (account ids masked). */
  path: string;
  status: number;
  tpp?: string;
  /** The PSU as the access log shows it (masked or pseudonymised). */
  psu?: string;
}

/**
 * The refusal of a request, if it was one: the first finding of a check in `enforce` mode that
 * dropped nothing, when the answer is an error.
 */
export function refusalOf(c: GatewayContext, status: number): Finding | undefined {
  if (status < 400) return undefined;
  return c.get("findings").find((f) => f.mode === "enforce" && !f.dropped);
}

/** The ECS event of a refusal for a security reason; `undefined` for any other refusal. */
export function securityEvent(
  finding: Finding,
  facts: RequestFacts & { op?: string },
): Record<string, unknown> | undefined {
  const reason = securityReason(finding);
  if (!reason) return undefined;
  const severity = severityOf(reason, finding);
  return {
    time: facts.time,
    level: "info",
    "@timestamp": facts.time,
    ecs: { version: "8.11.0" },
    message: `${finding.check} refused the request: ${finding.code}`,
    event: {
      kind: "alert",
      dataset: "xs2a_edge.security",
      module: "xs2a_edge",
      category: CATEGORY[reason],
      type: ["denied"],
      action: reason,
      outcome: "failure",
      reason: finding.code,
      severity: SEVERITY[severity],
    },
    log: { level: severity === "high" ? "warning" : "notice" },
    rule: { name: finding.check, category: reason },
    http: {
      request: { id: facts.requestId, method: facts.method },
      response: { status_code: facts.status },
    },
    url: { path: facts.path },
    ...(facts.tpp ? { organization: { id: facts.tpp } } : {}),
    ...(facts.psu ? { user: { id: facts.psu } } : {}),
    xs2a: {
      operation: facts.op,
      tpp: facts.tpp,
      check: finding.check,
      code: finding.code,
      ...(finding.path ? { field: finding.path } : {}),
      severity,
    },
  };
}

/**
 * The in-memory state of one sandbox instance: its records and its clock.
 *
 * Each `createSandbox()` owns a fresh state, so tests never see each other's payments.
 */

/** SCA status of an authorisation sub-resource. */
export type ScaStatus =
  | "received"
  | "psuIdentified"
  | "psuAuthenticated"
  | "scaMethodSelected"
  | "finalised";

/** How the PSU authenticates. */
export type ScaApproach = "REDIRECT" | "DECOUPLED";

/** One authorisation sub-resource (of a payment, a cancellation or a consent). */
export interface Authorisation {
  id: string;
  scaStatus: ScaStatus;
  approach: ScaApproach;
  /** The PSU-ID header of the request that created or last updated it. */
  psuId?: string;
}

/** A payment resource (single, bulk or periodic). */
export interface Payment {
  id: string;
  service: string;
  product: string;
  /** The JSON body as given, or the XML text of a `pain.001-*` product. */
  body: Record<string, unknown> | string;
  transactionStatus: string;
  /** Finalised authorisations needed: 2 for multilevel SCA (corporate context), else 1. */
  requiredAuthorisations: number;
  authorisations: Map<string, Authorisation>;
  cancellationAuthorisations: Map<string, Authorisation>;
}

/** Consent status as stored; `expired` by date is derived when read. */
export type ConsentStatus = "received" | "valid" | "expired" | "terminatedByTpp";

/** An account-access consent. */
export interface Consent {
  id: string;
  access: Record<string, unknown>;
  recurringIndicator: boolean;
  /** Last valid day, inclusive, after adjustment. */
  validUntil: string;
  frequencyPerDay: number;
  combinedServiceIndicator: boolean;
  psuId?: string;
  status: ConsentStatus;
  authorisations: Map<string, Authorisation>;
}

/** A merchant checkout order. */
export interface Order {
  orderId: string;
  paymentHash: string;
  createdAt: Date;
  request: Record<string, unknown>;
}

/** Everything one sandbox instance remembers. */
export interface SandboxState {
  now: () => Date;
  payments: Map<string, Payment>;
  consents: Map<string, Consent>;
  orders: Map<string, Order>;
}

/** A fresh, empty state with the given clock. */
export function createState(now: () => Date): SandboxState {
  return { now, payments: new Map(), consents: new Map(), orders: new Map() };
}

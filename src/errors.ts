// Typed errors: the core branches on these classes and codes, never on message text.
// Messages must never contain secrets (tokens, passwords): callers pass only safe facts.

export type ErrorCode =
  | 'CONFIG'
  | 'USAGE'
  | 'AUTH'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'UNSUPPORTED'
  | 'TRANSIENT'
  | 'API'
  | 'HOST_MAPPING'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'BLOCKED'
  | 'MIGRATION_FAILED'
  | 'RECORD_UNREADABLE'
  | 'RECORD_CONFLICT'
  | 'NODE_HELD';

export class DrainerError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** One problem in the configuration, named by its key path. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** Bad configuration or flags: exit code 2, one line per issue. */
export class ConfigError extends DrainerError {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[], options?: { cause?: unknown }) {
    super('CONFIG', issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('\n'), options);
    this.issues = issues;
  }
}

/**
 * A node name the cluster does not have: bad input, and the same line from every command
 * (start, plan, status, release, restore, run-once).
 */
export class UnknownNodeError extends ConfigError {
  readonly node: string;
  constructor(node: string, options?: { cause?: unknown }) {
    super([{ path: '', message: `node ${node} does not exist in the cluster` }], options);
    this.node = node;
  }
}

/** Details every HTTP-backed error keeps (never headers or bodies that might hold secrets). */
export interface ApiErrorDetails {
  readonly api: string; // "keystone", "nova", "kubernetes"
  readonly status?: number;
  readonly method?: string;
  readonly url?: string; // without query strings that carry secrets
  readonly requestId?: string;
  /** The service's own error text (e.g. Nova's fault message), for callers that must tell 400s apart. */
  readonly fault?: string;
}

export class ApiError extends DrainerError {
  readonly details: ApiErrorDetails;
  constructor(code: ErrorCode, message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super(code, message, options);
    this.details = details;
  }
  get status(): number | undefined {
    return this.details.status;
  }
}

/** Credentials rejected (401 after a re-auth) or auth not possible. */
export class AuthError extends ApiError {
  constructor(message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super('AUTH', message, details, options);
  }
}

/** 403: the credentials lack a right (e.g. Nova admin). */
export class ForbiddenError extends ApiError {
  constructor(message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super('FORBIDDEN', message, details, options);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, details, options);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super('CONFLICT', message, details, options);
  }
}

/** Worth retrying: connection errors, 502/503/504, 429. */
export class TransientError extends ApiError {
  constructor(message: string, details: ApiErrorDetails, options?: { cause?: unknown }) {
    super('TRANSIENT', message, details, options);
  }
}

/**
 * A non-idempotent call (a Nova action) whose answer was lost (timeout, reset, 502/503/504): it
 * may have been applied. Never re-sent blindly; the caller reads back whether it took.
 */
export class OutcomeUnknownError extends TransientError {}

/** The node could not be mapped to exactly one compute service. */
export class HostMappingError extends DrainerError {
  readonly tried: readonly string[];
  constructor(message: string, tried: readonly string[]) {
    super('HOST_MAPPING', `${message} (tried: ${tried.join('; ')})`);
    this.tried = tried;
  }
}

export class TimeoutError extends DrainerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TIMEOUT', message, options);
  }
}

export class CancelledError extends DrainerError {
  constructor(message = 'cancelled', options?: { cause?: unknown }) {
    super('CANCELLED', message, options);
  }
}

/** Workloads that cannot move under the configured policy. */
export class BlockedError extends DrainerError {
  readonly blockers: readonly { name: string; reason: string }[];
  constructor(message: string, blockers: readonly { name: string; reason: string }[]) {
    super('BLOCKED', message);
    this.blockers = blockers;
  }
}

/** The node's record cannot be read by this version: nothing acts on the node without --force. */
export class RecordUnreadableError extends DrainerError {
  constructor(message: string) {
    super('RECORD_UNREADABLE', message);
  }
}

/** Someone else wrote the node's record since this writer read it: re-read and decide again. */
export class RecordConflictError extends DrainerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RECORD_CONFLICT', message, options);
  }
}

/** Another agent instance holds the node's Lease: it is acting on the node. */
export class NodeHeldError extends DrainerError {
  readonly holder: string;
  constructor(message: string, holder: string) {
    super('NODE_HELD', message);
    this.holder = holder;
  }
}

export const isDrainerError = (e: unknown): e is DrainerError => e instanceof DrainerError;
export const isConfigError = (e: unknown): e is ConfigError => e instanceof ConfigError;
export const isUnknownNodeError = (e: unknown): e is UnknownNodeError => e instanceof UnknownNodeError;
export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;
export const isAuthError = (e: unknown): e is AuthError => e instanceof AuthError;
export const isForbiddenError = (e: unknown): e is ForbiddenError => e instanceof ForbiddenError;
export const isNotFoundError = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
export const isConflictError = (e: unknown): e is ConflictError => e instanceof ConflictError;
export const isTransientError = (e: unknown): e is TransientError => e instanceof TransientError;
export const isOutcomeUnknownError = (e: unknown): e is OutcomeUnknownError =>
  e instanceof OutcomeUnknownError;
export const isHostMappingError = (e: unknown): e is HostMappingError => e instanceof HostMappingError;
export const isTimeoutError = (e: unknown): e is TimeoutError => e instanceof TimeoutError;
export const isCancelledError = (e: unknown): e is CancelledError => e instanceof CancelledError;
export const isBlockedError = (e: unknown): e is BlockedError => e instanceof BlockedError;

/** Errors that mean "the input is wrong": exit code 2, no retry. */
export const isBadInput = (e: unknown): boolean =>
  isConfigError(e) ||
  isAuthError(e) ||
  isForbiddenError(e) ||
  isHostMappingError(e) ||
  (isDrainerError(e) && (e.code === 'USAGE' || e.code === 'RECORD_UNREADABLE' || e.code === 'NODE_HELD'));

/**
 * Failures an operator expects and fixes from the message alone: bad input (credentials, rights,
 * host mapping), an API that answered 429/5xx or not at all (refused, DNS, TLS, timeout). Logged
 * without a stack (it adds nothing) unless at debug.
 */
export const isExpectedFailure = (e: unknown): boolean =>
  isBadInput(e) || isTransientError(e) || isTimeoutError(e) || (isApiError(e) && e.status === undefined);

/** Process exit codes used by every command. */
export const ExitCode = { ok: 0, incomplete: 1, badInput: 2 } as const;

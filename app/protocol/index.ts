/**
 * The protocol library: SPEC.md's resources and rules as code, on web-standard
 * APIs only (it runs unchanged in Node, a browser, a Web Worker and Electron).
 *
 * Parsers never throw on bad input: they return `Parsed<T>`, either the value
 * or every violation with its JSONPath (or header name) and the rule ID it
 * breaks (see `rules`).
 */

// Results and violations.
export { ok, fail, failWith, unwrap, childPath, ProtocolError, type Parsed, type Violation } from "./result.ts";
export { noWork, type WorkMeter } from "./work.ts";

// The rules catalogue of SPEC.md and the readings of its gaps.
export { rules, ruleById, rulesBySection, sections, type Rule, type RuleId, type RuleStrength } from "./rules.ts";
export { gaps, gapById, type Gap } from "./gaps.ts";

// Resources and their fields.
export { parseMailbox, minimalLocalPart, formatMailbox, mailboxDomain, sameMailbox, type Mailbox } from "./mailbox.ts";
export {
  parseJson,
  parseEnvelope,
  envelopeJson,
  parseCapabilities,
  effectivePinMaxAgeS,
  parseDeliveryResult,
  parseRecipientResult,
  recipientResultJson,
  matchResults,
  parseProblem,
  problemIdentifier,
  createProblem,
  problemJson,
  problemResponse,
  jsonSchemas,
  PROBLEM_MEDIA_TYPE,
  DEFAULT_VERSIONS,
  DEFAULT_MAX_RECIPIENTS,
  MIN_MAX_MESSAGE_SIZE,
  MAX_PIN_AGE_S,
  type Envelope,
  type Capabilities,
  type DeliveryResult,
  type RecipientResult,
  type RecipientStatus,
  type Problem,
} from "./resources.ts";

// Errors: the table as data, and how a sender reads an answer by it.
export {
  errorsTable,
  PROBLEM_IDENTIFIERS,
  isProblemIdentifier,
  interpretRequestLevel,
  interpretRecipientResult,
  transportFailure,
  noCommonVersion,
  parseRetryAfter,
  type ProblemIdentifier,
  type ErrorsTableRow,
  type RequestLevelReading,
  type RecipientReading,
} from "./errors.ts";

// Versioning.
export {
  negotiateVersion,
  versionPath,
  parseVersionPath,
  isUnservedVersionPath,
  SUPPORTED_VERSIONS,
} from "./versions.ts";

// The request body: multipart/mixed with the envelope and the message (G9).
export { buildMultipartBody, parseMultipartBody, parseContentType, chooseBoundary } from "./multipart.ts";

// Content-Digest (RFC 9530).
export { createContentDigest, verifyContentDigest, parseContentDigest, createDigester } from "./digest.ts";

// HTTP Message Signatures (RFC 9421), and the project's profile on top (G1–G4).
export {
  createSignatureBase,
  signRequest,
  verifyRequestSignature,
  parseSignatureInput,
  serializeSignatureInput,
  parseSignature,
  serializeSignature,
  fromRequest,
  type HttpMessageView,
  type VerificationResult,
} from "./signature.ts";
export {
  PROFILE_COMPONENTS,
  signDelivery,
  verifyDelivery,
  profileChecks,
  keyidFor,
  signingDomainOfKeyid,
  buildKeyRecord,
  parseKeyRecord,
  generateSigningKey,
  importSigningKeyFromSeed,
  exportPublicKeyRaw,
  importPublicKeyRaw,
  exportSigningKeyJwk,
  importSigningKeyJwk,
  type ProfileVerdict,
  type ProfileCheck,
} from "./profile.ts";

// SVCB records (RFC 9460) for discovery (G5).
export { decodeSvcbRdata, encodeSvcbRdata, parseSvcbPresentation, formatSvcbPresentation } from "./svcb.ts";

// WebCrypto, observed (the simulator waits for every operation).
export { subtle, observeWebCrypto, useCryptoProvider } from "./webCrypto.ts";
export type { CryptoOperation, CryptoProvider } from "./webCrypto.ts";

// Delivery status notifications (RFC 3464).
export { buildDsn, parseDsn, statusFor, type DsnInput, type ParsedDsn } from "./dsn.ts";

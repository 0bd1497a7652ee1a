/**
 * What a thrown value says, for a message to a person: an Error's `message`,
 * anything else as text. The one way the app, the CLI and the core word a
 * failure they pass on.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a thrown value says with the kind of error it is (`TypeError: …`), for a failure told as it happened. */
export function errorWithName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** A thrown value as an Error, to reject or rethrow with: an Error as it is, anything else in one. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * What a thrown value says, for a message to a person: an Error's `message`,
 * anything else as text. The one way the app, the CLI and the core word a
 * failure they pass on.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

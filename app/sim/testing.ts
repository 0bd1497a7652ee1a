/**
 * The tests' scenario whose one message is read from an `eml:` file (POST-9),
 * and that file: for the session, Compare, bug bundles and replay, in Node and
 * in the end-to-end tests.
 */

/** Where the scenario's message is, relative to the scenario file. */
export const EML_PATH = "mail/hello.eml";

/** The message file's text: a non-ASCII body, so that its bytes are carried as bytes. */
export const EML_TEXT =
  "From: <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: raw\r\nMessage-ID: <hello@a.example>\r\n\r\nHi Bob \u00e9\r\n";

/** The message file's bytes (UTF-8). */
export const EML_BYTES: Uint8Array = new TextEncoder().encode(EML_TEXT);

/** The scenario (`raw`): alice@a.example sends the eml: message to bob@b.example, who accepts it. */
export const EML_SCENARIO = [
  "name: raw",
  "domains:",
  "  a.example: { mailboxes: [alice] }",
  "  b.example: { mailboxes: [bob] }",
  "messages:",
  `  - { id: m1, from: alice@a.example, to: bob@b.example, eml: ${EML_PATH} }`,
  "expectations:",
  "  - { message: m1, recipient: bob@b.example, outcome: accepted }",
  "",
].join("\n");

/**
 * The scenario editor's document: a name, where it was saved (Electron), the
 * text last saved, and the templates a new one starts from.
 */

/** A scenario in the editor. */
export interface EditorDoc {
  /** The file name (`my-scenario.yaml`): errors name it, Save uses it. */
  readonly name: string;
  /** Where the file is on disk (Electron), once opened from or saved to a file there. */
  readonly path?: string;
  /** The text as last opened or saved; the editor's text differs from it when there are unsaved changes. */
  readonly savedText: string;
  /** The text to start the editor with. */
  readonly text: string;
  /** A new document never saved: Save asks where. */
  readonly untitled: boolean;
  /** The `eml:` files the desktop app's main read next to the file when it opened it, for the editor's runs. */
  readonly emlFiles?: EmlFiles;
}

/**
 * A scenario's `eml:` files as the desktop app's main read them when it opened the scenario (main/channels.ts
 * `OpenedFile`): their bytes, and why a path has none. A run's `start` takes both.
 */
export interface EmlFiles {
  readonly emls?: Readonly<Record<string, Uint8Array>>;
  readonly emlErrors?: Readonly<Record<string, string>>;
}

/** The template of "New scenario": one message from a.example to b.example, delivered. */
export const BLANK_TEMPLATE = `# yaml-language-server: $schema=../schemas/scenario.schema.json
name: my-scenario
description: >-
  alice@a.example sends one message to bob@b.example, and it is accepted.
seed: 1
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
messages:
  - id: m1
    at: 0
    from: alice@a.example
    to: bob@b.example
    subject: Hello Bob
faults:
  network: []
expectations:
  - message: m1
    recipient: bob@b.example
    outcome: accepted
`;

/** A new, untitled document from the blank template. */
export function newDoc(): EditorDoc {
  return { name: "my-scenario.yaml", savedText: "", text: BLANK_TEMPLATE, untitled: true };
}

/** `teach-x.yaml` → `teach-x-copy.yaml`. */
export function copyName(file: string): string {
  const base = file.slice(file.lastIndexOf("/") + 1);
  const m = /^(.*?)(\.ya?ml)?$/i.exec(base);
  return `${m?.[1] ?? base}-copy${m?.[2] ?? ".yaml"}`;
}

/** `text` with its top-level `name:` set to `name` (added after the comments at the top if missing). */
export function withScenarioName(text: string, name: string): string {
  const line = /^name:[^\n]*$/m;
  if (line.test(text)) return text.replace(line, `name: ${name}`);
  const lead = /^(?:#[^\n]*\n|\s*\n)*/.exec(text)?.[0] ?? "";
  return `${lead}name: ${name}\n${text.slice(lead.length)}`;
}

/** A copy of a library scenario, unsaved: `teach-x-copy.yaml`, named `teach-x-copy` inside. */
export function duplicateDoc(file: string, text: string): EditorDoc {
  const name = copyName(file);
  return { name, savedText: "", text: withScenarioName(text, name.replace(/\.ya?ml$/i, "")), untitled: true };
}

/** A file the user opened, to edit in place; with the `eml:` files main read next to it, if any. */
export function fileDoc(name: string, text: string, path?: string, emlFiles?: EmlFiles): EditorDoc {
  return {
    name,
    savedText: text,
    text,
    untitled: false,
    ...(path !== undefined && { path }),
    ...(emlFiles !== undefined && { emlFiles }),
  };
}

/**
 * A file name typed for Save as: the last path part, `.yaml` added when it has
 * no YAML extension; undefined when nothing usable is left.
 */
export function saveAsName(input: string): string | undefined {
  const base = input.trim().split(/[/\\]/).pop()?.trim() ?? "";
  const clean = [...base].filter((c) => c.charCodeAt(0) >= 0x20 && !'<>:"|?*'.includes(c)).join("");
  if (clean === "" || /^\.+$/.test(clean)) return undefined;
  return /\.ya?ml$/i.test(clean) ? clean : `${clean}.yaml`;
}

/**
 * The document after a save as `name` (at `path`, in Electron) of `text`. Its `eml:` files stay when it is
 * saved where it was: saved elsewhere, its relative `eml:` paths name other files, which main has not read.
 */
export function savedDoc(doc: EditorDoc, text: string, name: string, path?: string): EditorDoc {
  const { path: _old, emlFiles, ...rest } = doc;
  void _old;
  return {
    ...rest,
    name,
    text,
    savedText: text,
    untitled: false,
    ...(path !== undefined && { path }),
    ...(emlFiles !== undefined && path !== undefined && path === doc.path && { emlFiles }),
  };
}

/** Whether `text` holds edits not saved. A new document counts as unsaved once it differs from its template. */
export function isDirty(doc: EditorDoc, text: string): boolean {
  return doc.untitled ? text !== doc.text : text !== doc.savedText;
}

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { receiverConfigSchema } from "../receiver/config.ts";
import {
  ConfigFileInvalidError,
  fieldName,
  formatConfigError,
  loadReceiverConfigFile,
  readReceiverConfigFile,
  validateYamlText,
  type ConfigFileError,
} from "./receiverConfigFile.ts";

const good = `domains: [b.example]
capabilities:
  max_message_size: 26214400
problem_base: https://b.example/problems
mailboxes:
  - address: bob@b.example
`;

function errorsOf(text: string): readonly ConfigFileError[] {
  const result = validateYamlText(text, "receiver.yaml", receiverConfigSchema);
  if (result.ok) throw new Error("expected errors");
  return result.errors;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("receiver.yaml", () => {
  it("CAP-6 PRB-2: a minimal file loads with the defaults applied", () => {
    const result = validateYamlText(good, "receiver.yaml", receiverConfigSchema);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.capabilities).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
      discovery_pin_max_age: 604800,
    });
    expect(result.value.idempotencyRetentionS).toBe(604800);
  });

  it("CAP-7: a max_message_size under 25 MiB is reported at its line and column", () => {
    const text = good.replace("max_message_size: 26214400", "max_message_size: 1000");
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 3, column: 21, field: "capabilities.max_message_size" });
    expect(formatConfigError(errors[0] as ConfigFileError)).toMatch(
      /^receiver\.yaml:3:21: capabilities\.max_message_size: max_message_size is at least 26214400 \(CAP-7\)$/,
    );
  });

  it("MBX-3: a bad mailbox deep in a list names its index", () => {
    const text = `${good}  - address: not-a-mailbox\n`;
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 7, column: 14, field: "mailboxes[1].address" });
  });

  it("CAP-8: a wrong type says what was expected", () => {
    const errors = errorsOf(
      good.replace("max_message_size: 26214400", "max_message_size: 26214400\n  max_recipients: lots"),
    );
    expect(errors[0]).toMatchObject({ line: 4, column: 19, field: "capabilities.max_recipients" });
    expect(errors[0]?.message).toMatch(/number/);
  });

  it("CAP-17 VER-3: unknown fields are errors in a configuration (a typo must not pass silently), at the key", () => {
    const errors = errorsOf(`${good}catchall: true\n`);
    expect(errors).toEqual([
      { file: "receiver.yaml", line: 7, column: 1, field: "catchall", message: 'unknown field "catchall"' },
    ]);
  });

  it("PRB-2: a missing required field points at the object that lacks it", () => {
    const errors = errorsOf(good.replace("problem_base: https://b.example/problems\n", ""));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 1, column: 1, field: "problem_base" });
    expect(errors[0]?.message).toMatch(/required/);
  });

  it("ENV-7: errors from the cross-field checks carry their path too, every error at once, in file order", () => {
    const text = `${good}  - address: eve@elsewhere.example\npolicy:\n  recipientRefusals:\n    - mailbox: x@other.example\n`;
    const errors = errorsOf(text);
    expect(errors.map((e) => `${e.line}:${e.column} ${e.field}`)).toEqual([
      "7:14 mailboxes[1].address",
      "10:16 policy.recipientRefusals[0].mailbox",
    ]);
    expect(errors[0]?.message).toBe("elsewhere.example is not one of the served domains");
  });

  it("POST-4 G4: keyid keys with dots are quoted in the field name", () => {
    const errors = errorsOf(`${good}keyRecords:\n  s1._svckey.a.example: 42\n`);
    expect(errors[0]).toMatchObject({ line: 8, column: 25, field: 'keyRecords["s1._svckey.a.example"]' });
  });

  it("G4: a keyRecords entry that is not a key record, or whose keyid is not one, is refused where it is", () => {
    const errors = errorsOf(
      `${good}keyRecords:\n  s1._svckey.a.example: "v=svc1; k=rsa; p=AAAA"\n  nokeyid.a.example: "v=svc1; k=ed25519; p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="\n`,
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.field}`)).toEqual([
      '8:25 keyRecords["s1._svckey.a.example"]',
      '9:22 keyRecords["nokeyid.a.example"]',
    ]);
    expect(errors[0]?.message).toMatch(/not a key record \(G4\).*ed25519/);
    expect(errors[1]?.message).toMatch(/_svckey/);
  });

  it("G4: two keyRecords keyids that differ only in case are refused (DNS names compare without case)", () => {
    const errors = errorsOf(
      `${good}keyRecords:\n  s1._svckey.a.example: "v=svc1; k=ed25519; p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="\n  s1._svckey.A.EXAMPLE: "v=svc1; k=ed25519; p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="\n`,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe('keyRecords["s1._svckey.A.EXAMPLE"]');
  });

  it("G10: YAML syntax errors come with their position", () => {
    const errors = errorsOf("domains: [b.example\ncapabilities: {\n");
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]?.field).toBe("(yaml)");
    expect(errors[0]?.line).toBeGreaterThanOrEqual(1);
  });

  it("G10: an empty file and a file that is not a mapping are errors, not crashes", () => {
    expect(errorsOf("")[0]).toMatchObject({ line: 1, column: 1, field: "(file)" });
    // A list or a word holds no fields: the file says what it must hold, as every YAML file of the project does.
    for (const text of ["- a\n- b\n", "b.example\n"]) {
      expect(errorsOf(text)).toEqual([
        {
          file: "receiver.yaml",
          line: 1,
          column: 1,
          field: "(file)",
          message: "the file must hold a mapping of fields",
        },
      ]);
    }
  });

  it("G10: a file that does not exist is one error naming it", async () => {
    const missing = join(dir, "nope.yaml");
    const result = await loadReceiverConfigFile(missing);
    expect(result.ok).toBe(false);
    await expect(readReceiverConfigFile(missing)).rejects.toThrow(
      `${missing}:1:1: (file): cannot be read: no such file`,
    );
  });

  it("G10: readReceiverConfigFile throws every error, one per line", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(file, good.replace("26214400", "5").replace("https://b.example/problems", "not a uri"));
    const error = await readReceiverConfigFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigFileInvalidError);
    const lines = (error as Error).message.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:21: capabilities\\.max_message_size: `),
    );
    expect(lines[1]).toMatch(/:4:15: problem_base: problem_base is an absolute URI \(PRB-2\)$/);
  });

  it("CAP-12: examples/receiver.yaml, which documents every field, is valid", async () => {
    const result = await loadReceiverConfigFile(new URL("../../examples/receiver.yaml", import.meta.url).pathname);
    expect(result.ok ? [] : result.errors.map(formatConfigError)).toEqual([]);
  });

  it("fieldName writes JSONPath-like names", () => {
    expect(fieldName([])).toBe("(top level)");
    expect(fieldName(["policy", "rateLimits", 0, "max"])).toBe("policy.rateLimits[0].max");
  });
});

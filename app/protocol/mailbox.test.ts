import { describe, expect, it } from "vitest";
import fc from "fast-check";
import cases from "./fixtures/mailbox-cases.json" with { type: "json" };
import { formatMailbox, mailboxDomain, minimalLocalPart, parseMailbox, sameMailbox } from "./mailbox.ts";
import type { Mailbox } from "./mailbox.ts";

function rulesOf(input: unknown): string[] {
  const parsed = parseMailbox(input);
  return parsed.ok ? [] : [...new Set(parsed.violations.map((v) => v.rule))].sort();
}

function valueOf(input: string): Mailbox {
  const parsed = parseMailbox(input);
  if (!parsed.ok) throw new Error(`expected ${input} to parse: ${JSON.stringify(parsed.violations)}`);
  return parsed.value;
}

describe("the published mailbox cases, judged by the spec", () => {
  /**
   * Where the spec's Mailbox table and the published RFC 5321 + RFC 6531
   * verdict part ways. Every other case keeps its published verdict. Each
   * reason names the rule that decides it.
   */
  const reasons = {
    "u-label": {
      rule: "MBX-3",
      why: "the domain is written in U-labels; the spec allows only IDNA A-labels (letters, digits, dot, hyphen)",
      specValid: false,
    },
    "address-literal": {
      rule: "MBX-3",
      why: "an address literal [..] is not host-name syntax",
      specValid: false,
    },
    "numeric-tld": {
      rule: "MBX-3",
      why: "host-name syntax (RFC 1123 §2.1) does not allow an all-numeric last label; the vectors called it policy-dependent",
      specValid: false,
    },
    "over-254": {
      rule: "MBX-8",
      why: "the vectors apply the 254-octet limit of RFC 3696 erratum 1690; the spec allows 320 characters, and local part and domain are within their own limits",
      specValid: true,
    },
    "needless-quotes": {
      rule: "MBX-7",
      why: "the quoted content is a valid dot-string, so the minimal form has no quotes",
      specValid: false,
    },
    "needless-escape": {
      rule: "MBX-7",
      why: "quoting is needed but a backslash escapes a character that needs none; the minimal form escapes only '\"' and '\\'",
      specValid: false,
    },
  } as const;
  type Reason = keyof typeof reasons;

  const differing: Record<string, Reason> = {
    "test@iana.123": "numeric-tld",
    "test@255.255.255.255": "numeric-tld",
    "test@[255.255.255.255]": "address-literal",
    "test@[IPv6:1111:2222:3333:4444:5555:6666:7777:8888]": "address-literal",
    "test@[IPv6:1111:2222:3333:4444:5555::8888]": "address-literal",
    "test@[IPv6:::3333:4444:5555:6666:7777:8888]": "address-literal",
    "test@[IPv6:::]": "address-literal",
    "test@[IPv6:1111:2222:3333:4444:5555:6666:255.255.255.255]": "address-literal",
    "test@[IPv6:1111:2222:3333:4444::255.255.255.255]": "address-literal",
    "me@[127.0.0.1]": "address-literal",
    "me@[IPv6:::1]": "address-literal",
    "me@[IPv6:0000:0000:0000:0000:0000:0000:0000:0001]": "address-literal",
    "jeff@臺網中心.tw": "u-label",
    "伊昭傑@郵件.商務": "u-label",
    "राम@मोहन.ईन्फो": "u-label",
    "юзер@екзампл.ком": "u-label",
    "θσερ@εχαμπλε.ψομ": "u-label",
    "葉士豪@臺網中心.tw": "u-label",
    "葉士豪@臺網中心.台灣": "u-label",
    "jeff葉@臺網中心.tw": "u-label",
    "ιωάννης@εεττ.gr": "u-label",
    '"test"@iana.org': "needless-quotes",
    '"\\a"@iana.org': "needless-quotes",
    '"quoted.with.extraneous.\\escape"@example.com': "needless-quotes",
    '"unnecessarily.quoted.with.unicode.λ"@example.com': "needless-quotes",
    '"test\\ test"@iana.org': "needless-escape",
    '"Abc\\@def"@example.com': "needless-escape",
    '"Fred\\ Bloggs"@example.com': "needless-escape",
  };
  // The three long addresses are listed by shape, not spelled out.
  const over254 = cases.cases.filter(
    (c) => !c.valid_rfc5321 && c.topic === "length" && [...c.address].length > 254 && [...c.address].length <= 320,
  );

  function reasonFor(address: string): Reason | undefined {
    if (over254.some((c) => c.address === address)) {
      const domain = address.slice(address.lastIndexOf("@") + 1);
      return domain.length <= 253 ? "over-254" : undefined;
    }
    return differing[address];
  }

  it("MBX-1..MBX-8: the fixture holds all 246 published cases", () => {
    expect(cases.cases).toHaveLength(246);
  });

  it("MBX-3, MBX-7, MBX-8: every listed difference really differs from the published verdict", () => {
    for (const address of Object.keys(differing)) {
      const published = cases.cases.find((c) => c.address === address);
      expect(published, address).toBeDefined();
      expect(published?.valid_rfc5321, address).toBe(!reasons[differing[address] as Reason].specValid);
    }
    // 229 and 230 of the vectors, plus the 255-character isemail case; the 257/258-character ones break the domain limit too.
    expect(over254.filter((c) => reasonFor(c.address) === "over-254")).toHaveLength(3);
  });

  it("MBX-3: the U-label and address-literal lists are exactly the published-valid cases with such domains", () => {
    const domainOf = (a: string) => a.slice(a.lastIndexOf("@") + 1);
    const uLabel = cases.cases.filter((c) => c.valid_rfc5321 && /[\u0080-\u{10FFFF}]/u.test(domainOf(c.address)));
    const literal = cases.cases.filter((c) => c.valid_rfc5321 && domainOf(c.address).startsWith("["));
    expect(uLabel.map((c) => differing[c.address])).toEqual(uLabel.map(() => "u-label"));
    expect(literal.map((c) => differing[c.address])).toEqual(literal.map(() => "address-literal"));
  });

  for (const [index, c] of cases.cases.entries()) {
    const reason = reasonFor(c.address);
    const expected = reason === undefined ? c.valid_rfc5321 : reasons[reason].specValid;
    const title =
      reason === undefined
        ? `MBX-1..MBX-8: case ${index} ${JSON.stringify(c.address).slice(0, 60)} is ${expected ? "valid" : "invalid"}, as published`
        : `${reasons[reason].rule}: case ${index} ${JSON.stringify(c.address).slice(0, 60)} is ${expected ? "valid" : "invalid"}, unlike the published verdict: ${reasons[reason].why}`;
    it(title, () => {
      const parsed = parseMailbox(c.address);
      expect(parsed.ok).toBe(expected);
      if (reason !== undefined && !reasons[reason].specValid) {
        expect(rulesOf(c.address)).toContain(reasons[reason].rule);
      }
    });
  }
});

describe("MBX-1, MBX-2: form, split at the last @", () => {
  it("MBX-1: a string without @ is refused", () => {
    expect(rulesOf("postmaster")).toEqual(["MBX-1"]);
  });

  it("MBX-1: a non-string is refused with the path given", () => {
    const parsed = parseMailbox(42, "$.to[3]");
    expect(parsed).toEqual({
      ok: false,
      violations: [{ path: "$.to[3]", rule: "MBX-1", message: "a mailbox is a string, not a number" }],
    });
    expect(rulesOf(null)).toEqual(["MBX-1"]);
  });

  it("MBX-2: the split is at the last @, so an @ inside a quoted local part stays in the local part", () => {
    const value = valueOf('"a@b"@Example.COM');
    expect(value).toEqual({ localPart: '"a@b"', domain: "example.com", address: '"a@b"@example.com' });
  });

  it("MBX-1: a lone surrogate is refused (it has no UTF-8 form)", () => {
    expect(rulesOf("a\uD800b@example.com")).toEqual(["MBX-1"]);
  });
});

describe("MBX-3: domain in host-name syntax, A-labels", () => {
  it("MBX-3: the domain is lowercased, the local part kept as written", () => {
    expect(valueOf("Alice.Smith@Mail.Example.ORG")).toEqual({
      localPart: "Alice.Smith",
      domain: "mail.example.org",
      address: "Alice.Smith@mail.example.org",
    });
  });

  it("MBX-3: a valid A-label is accepted, an invalid xn-- label refused", () => {
    expect(valueOf("jeff@XN--FIQQ24B10VI0D.tw").domain).toBe("xn--fiqq24b10vi0d.tw");
    expect(parseMailbox("a@xn--mnchen-3ya.de").ok).toBe(true);
    expect(rulesOf("a@xn--0.tld")).toEqual(["MBX-3"]);
    // An ASCII-only payload is not an A-label: "xn--abc-" would decode to "abc".
    expect(rulesOf("a@xn--abc-.example")).toEqual(["MBX-3"]);
  });

  it("MBX-3: a label of 63 characters is accepted, 64 refused", () => {
    expect(parseMailbox(`a@${"x".repeat(63)}.example`).ok).toBe(true);
    expect(rulesOf(`a@${"x".repeat(64)}.example`)).toEqual(["MBX-3"]);
  });

  it("MBX-3: a domain of 253 characters is accepted, 254 refused", () => {
    const label = "x".repeat(63);
    const d253 = `${label}.${label}.${label}.${"y".repeat(61)}`;
    expect(d253).toHaveLength(253);
    expect(parseMailbox(`a@${d253}`).ok).toBe(true);
    expect(rulesOf(`a@${d253}z`)).toEqual(["MBX-3"]);
  });

  it("MBX-3: labels may not start or end with a hyphen, be empty or hold other characters", () => {
    for (const bad of [
      "a@-x.example",
      "a@x-.example",
      "a@x..example",
      "a@.example",
      "a@example.",
      "a@ex_ample.org",
      "a@",
      "a@x y.org",
    ]) {
      expect(rulesOf(bad), bad).toEqual(["MBX-3"]);
    }
  });

  it("MBX-3: dotless domains and R-LDH labels are host-name syntax and accepted", () => {
    expect(parseMailbox("root@localhost").ok).toBe(true);
    expect(parseMailbox("a@c--n.com").ok).toBe(true);
  });
});

describe("MBX-4, MBX-5: local part, dot-string or quoted-string", () => {
  it("MBX-5: UTF-8 from U+00A0 upward is atext; C1 controls are not", () => {
    expect(parseMailbox("\u00A0x@example.com").ok).toBe(true);
    expect(parseMailbox("ñoñó@example.com").ok).toBe(true);
    expect(rulesOf("a\u0085b@example.com")).toEqual(["MBX-5"]);
    expect(rulesOf('"a\u009Fb"@example.com')).toEqual(["MBX-5"]);
  });

  it("MBX-4: a backslash may escape only printable ASCII", () => {
    expect(rulesOf('"a\\é b"@example.com')).toEqual(["MBX-4"]);
  });

  it("MBX-4: dots must separate atoms", () => {
    expect(rulesOf(".a@example.com")).toEqual(["MBX-4"]);
    expect(rulesOf("a.@example.com")).toEqual(["MBX-4"]);
    expect(rulesOf("a..b@example.com")).toEqual(["MBX-4"]);
    expect(rulesOf("@example.com")).toEqual(["MBX-4"]);
  });

  it("MBX-4: a violation says which character is wrong", () => {
    const parsed = parseMailbox("a b@example.com");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.violations[0]?.message).toContain("U+0020");
  });
});

describe("MBX-6, MBX-9: local part at most 64 octets", () => {
  it("MBX-6: 64 octets are accepted, 65 refused", () => {
    expect(parseMailbox(`${"a".repeat(64)}@example.com`).ok).toBe(true);
    expect(rulesOf(`${"a".repeat(65)}@example.com`)).toEqual(["MBX-6"]);
  });

  it("MBX-6: the limit counts UTF-8 octets, not characters", () => {
    expect(parseMailbox(`${"é".repeat(32)}@example.com`).ok).toBe(true);
    expect(rulesOf(`${"é".repeat(33)}@example.com`)).toEqual(["MBX-6"]);
  });

  it("MBX-6: quotes and escapes count towards the limit", () => {
    expect(parseMailbox(`"${" ".repeat(62)}"@example.com`).ok).toBe(true);
    expect(rulesOf(`"${" ".repeat(63)}"@example.com`)).toEqual(["MBX-6"]);
  });
});

describe("MBX-7, MBX-9: minimal quoting", () => {
  it("MBX-7: a quoted-string where a dot-string would do is refused, naming the minimal form", () => {
    const parsed = parseMailbox('"john.doe"@example.com');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.violations).toEqual([
        {
          path: "$",
          rule: "MBX-7",
          message: 'the local part "john.doe" is not in its minimal form; write it as john.doe',
        },
      ]);
    }
  });

  it('MBX-7: quoting that is needed is accepted, with escapes only before " and \\', () => {
    expect(parseMailbox('"john doe"@example.com').ok).toBe(true);
    expect(parseMailbox('"a\\"b"@example.com').ok).toBe(true);
    expect(parseMailbox('"a\\\\b"@example.com').ok).toBe(true);
    expect(parseMailbox('"a..b"@example.com').ok).toBe(true);
    expect(parseMailbox('""@example.com').ok).toBe(true);
  });

  it("MBX-7: minimalLocalPart unquotes, quotes and escapes as needed", () => {
    expect(minimalLocalPart('"john.doe"')).toBe("john.doe");
    expect(minimalLocalPart('"john\\ doe"')).toBe('"john doe"');
    expect(minimalLocalPart("john doe")).toBe('"john doe"');
    expect(minimalLocalPart('say "hi"')).toBe('"say \\"hi\\""');
    expect(minimalLocalPart("a\\b")).toBe('"a\\\\b"');
    expect(minimalLocalPart("")).toBe('""');
    expect(minimalLocalPart("λ.x")).toBe("λ.x");
  });

  it("MBX-7, MBX-3: formatMailbox writes the minimal local part and the lowercased domain", () => {
    expect(formatMailbox("Fred Bloggs", "Example.COM")).toBe('"Fred Bloggs"@example.com');
    expect(formatMailbox('"fred"', "example.com")).toBe("fred@example.com");
  });

  const content = fc.string({
    unit: fc.constantFrom("a", "Z", "0", ".", " ", '"', "\\", "@", "!", "λ", "é", "葉", "(", ",", "~", "𝒳"),
    maxLength: 20,
  });

  it("MBX-7: minimalLocalPart is idempotent (property)", () => {
    fc.assert(
      fc.property(content, (c) => {
        const once = minimalLocalPart(c);
        expect(minimalLocalPart(once)).toBe(once);
      }),
      { seed: 5321, numRuns: 500 },
    );
  });

  it("MBX-4, MBX-7: the output of minimalLocalPart parses as the local part of a mailbox (property)", () => {
    fc.assert(
      fc.property(content, (c) => {
        const local = minimalLocalPart(c);
        const parsed = parseMailbox(`${local}@example.com`);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(parsed.value.localPart).toBe(local);
      }),
      { seed: 6531, numRuns: 500 },
    );
  });

  it("MBX-7: every local part that parses is already minimal (property)", () => {
    const written = fc.oneof(
      content,
      content.map((c) => `"${c.replace(/["\\]/g, "\\$&")}"`),
      content.map((c) => `"${c.replace(/[" \\a]/g, "\\$&")}"`),
    );
    fc.assert(
      fc.property(written, (w) => {
        const parsed = parseMailbox(`${w}@example.com`);
        if (parsed.ok) expect(minimalLocalPart(parsed.value.localPart)).toBe(parsed.value.localPart);
      }),
      { seed: 1123, numRuns: 500 },
    );
  });
});

describe("MBX-8: whole string at most 320 characters", () => {
  it("MBX-8: a mailbox over 320 characters is refused with MBX-8 (among others)", () => {
    const long = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.${"e".repeat(63)}.com`;
    expect([...long].length).toBeGreaterThan(320);
    expect(rulesOf(long)).toContain("MBX-8");
  });

  it("MBX-8: the longest mailbox the other limits allow, 318 characters, passes", () => {
    const label = "x".repeat(63);
    const address = `${"a".repeat(64)}@${label}.${label}.${label}.${"y".repeat(61)}`;
    expect(address).toHaveLength(318);
    expect(parseMailbox(address).ok).toBe(true);
  });
});

describe("helpers", () => {
  it("MBX-3: mailboxDomain gives the lowercased domain, or undefined for a non-mailbox", () => {
    expect(mailboxDomain("a@Example.Org")).toBe("example.org");
    expect(mailboxDomain("not a mailbox")).toBeUndefined();
  });

  it("MBX-3, MBX-4: sameMailbox compares domains without case and local parts exactly (G22)", () => {
    expect(sameMailbox(valueOf("Bob@EXAMPLE.com"), valueOf("Bob@example.COM"))).toBe(true);
    expect(sameMailbox(valueOf("Bob@example.com"), valueOf("bob@example.com"))).toBe(false);
  });
});

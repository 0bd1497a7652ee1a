import type { Rule } from "../../app/protocol/rules.ts";

/**
 * The rules that match every word of the query, in catalogue order. A word
 * matches an ID prefix (`RETRY`), a whole ID (`ERR-4`), the section or the rule's text,
 * case-insensitively.
 */
export function filterRules(rules: readonly Rule[], query: string): Rule[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...rules];
  return rules.filter((rule) => {
    const id = rule.id.toLowerCase();
    const haystack = `${rule.section} ${rule.text} ${rule.strength}`.toLowerCase();
    // A whole ID (`ERR-4`) matches only itself, not ERR-40; a bare prefix (`retry`) matches its section.
    return words.every((w) => (/-\d+$/.test(w) ? id === w : id.startsWith(w)) || haystack.includes(w));
  });
}

/**
 * `compute` with its answers kept by the text it was asked about: at most
 * `capacity` of them, all dropped when full (a stream of different texts,
 * forged ones say, costs recomputing, never memory without end), and none for
 * a text longer than `maxLength`. An answer `undefined` is not kept. For pure
 * functions whose answers nobody changes: callers share them.
 *
 * The protocol code asks the same few questions on every delivery (the
 * sender's key record, its keyid, the Content-Type, the component names), so
 * the answers are worth keeping across deliveries.
 */
export function keptAnswers<V>(
  compute: (text: string) => V,
  capacity: number,
  maxLength = Number.POSITIVE_INFINITY,
): (text: string) => V {
  const answers = new Map<string, V>();
  return (text) => {
    const known = answers.get(text);
    if (known !== undefined) return known;
    const answer = compute(text);
    if (text.length <= maxLength && answer !== undefined) {
      if (answers.size >= capacity) answers.clear();
      answers.set(text, answer);
    }
    return answer;
  };
}

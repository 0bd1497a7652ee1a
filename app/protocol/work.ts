/**
 * A count of the steps of work a parser does on its input, so that a test
 * can bound the work per byte of input, or compare two inputs, without a
 * clock (one request of 100,000 recipients held a receiver for
 * minutes). A step is a constant amount of work, or one character read: a
 * mailbox of n characters read is n + 1 steps, a lookup or a comparison one.
 * Nothing is counted when no meter is given.
 */
export type WorkMeter = (steps: number) => void;

/** The meter that counts nothing. */
export const noWork: WorkMeter = () => {};

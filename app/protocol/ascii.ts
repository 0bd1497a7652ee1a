/** Text whose every UTF-16 unit is ASCII (U+0000–U+007F): its UTF-8 is one byte per character. */
const ASCII = /^[^\u0080-\uffff]*$/;

/**
 * Whether `text` is ASCII only, so that its UTF-8 has one byte per character and it can be written straight
 * into bytes (decision 0235), or needs no encoded form (a DSN's text).
 */
export function isAscii(text: string): boolean {
  return ASCII.test(text);
}

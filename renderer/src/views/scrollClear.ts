/**
 * Scrolling a part of the page into view clear of the bars that stay at the window's top (the title bar, then the
 * playback bar under it): what they cover when stuck is where each sticks plus its height, wherever the page is
 * scrolled now.
 */
export function scrollClearOfBars(target: Element, options: ScrollIntoViewOptions): void {
  let covered = 0;
  for (const bar of document.querySelectorAll<HTMLElement>(".titlebar, .controls"))
    covered = Math.max(covered, (Number.parseFloat(getComputedStyle(bar).top) || 0) + bar.offsetHeight);
  const root = document.documentElement;
  root.style.scrollPaddingTop = `${covered}px`;
  target.scrollIntoView(options);
  root.style.scrollPaddingTop = "";
}

/**
 * A browser's user-agent string in words for people ("Chrome 131 on Linux"), for the sessions
 * page; the raw string stays in the cell's title. Unrecognized strings are shortened, not guessed.
 */
export function describeUserAgent(ua: string | null | undefined): string {
  const text = (ua ?? '').trim();
  if (!text) return 'Unknown browser';
  const version = (re: RegExp) => text.match(re)?.[1]?.split('.')[0];
  const browser =
    (version(/Edg(?:e|A|iOS)?\/([\d.]+)/) && `Edge ${version(/Edg(?:e|A|iOS)?\/([\d.]+)/)}`) ||
    (version(/OPR\/([\d.]+)/) && `Opera ${version(/OPR\/([\d.]+)/)}`) ||
    (version(/Firefox\/([\d.]+)/) && `Firefox ${version(/Firefox\/([\d.]+)/)}`) ||
    (version(/(?:HeadlessChrome|Chrome|CriOS)\/([\d.]+)/) &&
      `${/HeadlessChrome/.test(text) ? 'Headless Chrome' : 'Chrome'} ${version(/(?:HeadlessChrome|Chrome|CriOS)\/([\d.]+)/)}`) ||
    (/Safari\//.test(text) && version(/Version\/([\d.]+)/) && `Safari ${version(/Version\/([\d.]+)/)}`) ||
    (version(/^curl\/([\d.]+)/) && `curl ${version(/^curl\/([\d.]+)/)}`) ||
    null;
  const os = /Android/.test(text)
    ? 'Android'
    : /iPhone|iPad|iPod/.test(text)
      ? 'iOS'
      : /Windows/.test(text)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(text)
          ? 'macOS'
          : /CrOS/.test(text)
            ? 'ChromeOS'
            : /Linux/.test(text)
              ? 'Linux'
              : null;
  if (browser) return os ? `${browser} on ${os}` : browser;
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

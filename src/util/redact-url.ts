/**
 * A URL as taskgate writes it (logs, /readyz, errors to clients, stored task errors): its user
 * and password and every query value masked, so a token put in an upstream URL
 * (`https://user:pass@host/mcp?key=…`) is never printed. The path, which names the endpoint, stays.
 */
export const MASK = "[redacted]";

export function displayUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return MASK; // not a URL: nothing of it is known to be safe to show
  }
  const userinfo = parsed.username !== "" || parsed.password !== "" ? `${MASK}@` : "";
  // A pair without `=` (`?s3cret`) is all value.
  const pairs = parsed.search.slice(1).split("&");
  const query = parsed.search === "" ? "" : `?${pairs.map((pair) => (pair.includes("=") ? `${pair.slice(0, pair.indexOf("="))}=${MASK}` : MASK)).join("&")}`;
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}${query}`;
}

/**
 * The parts of a URL that `displayUrl` masks, as they may appear in someone else's text (an error
 * that quotes the URL, an upstream's page that echoes it): encoded and decoded, with the whole URL.
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const raw = parsed.search
    .slice(1)
    .split("&")
    .map((pair) => pair.slice(pair.indexOf("=") + 1));
  const parts = [parsed.username, parsed.password, ...raw, ...[...parsed.searchParams.values()]];
  const decoded = parts.flatMap((part) => [part, safeDecode(part)]);
  // The whole URL is a secret only when it holds one; otherwise it names the upstream, as displayUrl does.
  const whole = displayUrl(url) === parsed.href ? [] : [url, parsed.href];
  return [...whole, ...decoded].filter((part, i, all) => part.length > 0 && all.indexOf(part) === i);
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

// The page's URL map (`pexe2wasm web --url-map FROM=TO`): what an app's hard-coded URLs
// (servers long gone, or hosts a test must keep on loopback) are fetched from instead.

/** The map as [[from, to]], longest FROM first (so the most specific entry wins). */
export function urlMapOf(obj) {
  return Object.entries(obj ?? {})
    .filter(([from, to]) => typeof from === "string" && typeof to === "string" && from.length > 0)
    .sort((x, y) => y[0].length - x[0].length);
}

/** `url` with the longest mapped prefix replaced by its target. */
export function mapUrl(url, map) {
  for (const [from, to] of map) if (url.startsWith(from)) return to + url.slice(from.length);
  return url;
}

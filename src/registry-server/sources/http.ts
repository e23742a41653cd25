/** Bounded HTTP GET for sources: a timeout, a size cap, and errors that name the URL, never a body. */
export const MAX_SOURCE_BYTES = 100 * 1024 * 1024;

export async function httpGet(url: string, timeoutMs: number, accept = 'application/json'): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { 'User-Agent': 'toolhive-registry-server/1.0', Accept: accept },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'follow',
    });
  } catch (err) {
    const e = err as Error;
    throw new Error(`GET ${url}: ${e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (e.cause as Error)?.message ?? e.message}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`GET ${url}: unexpected status ${res.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_SOURCE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`GET ${url}: response larger than ${MAX_SOURCE_BYTES} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

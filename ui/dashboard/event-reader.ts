import { errorOf, requestHeaders } from './api.js';

/**
 * Reads server-sent events over fetch, calling `onEvent` with each event's type and data, until the
 * stream ends or `signal` aborts. NOTE: not EventSource, which cannot send the Authorization header
 * that `--auth-token-file` asks for; the format is simple enough (blocks of `field: value` lines
 * separated by a blank line: https://html.spec.whatwg.org/multipage/server-sent-events.html).
 */
export async function readEvents(url: string, onEvent: (type: string, data: string) => void, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, { headers: requestHeaders({ accept: 'text/event-stream' }), signal });
  if (!response.ok || response.body === null) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon === 0) continue;
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = text;
        else if (field === 'data') data.push(text);
      }
      if (data.length > 0) onEvent(type, data.join('\n'));
    }
  }
}

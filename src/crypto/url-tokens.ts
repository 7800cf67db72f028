import { hideCallbackToken } from './callback-tokens';

const CODEC_UI_TOKEN = /^(\/codec\/ui\/)[^/?]+/;

/** A request URL with its secret path segments (a callback URL's token, a Web UI codec URL's) replaced, for logs and traces. */
export function hideUrlTokens(url: string): string {
  return hideCallbackToken(url).replace(CODEC_UI_TOKEN, '$1[token]');
}

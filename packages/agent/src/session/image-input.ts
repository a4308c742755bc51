/**
 * The check of an image a user sends: base64 that decodes, one of the media types every provider adapter
 * accepts, bytes that really are that type (sniffed from their signature) and a size under the limit. A bad
 * image is refused before it is saved, rather than sent to the model and resent on every later turn.
 */

import { type AgentError, invalidInput } from '../kernel/error.js';

/** The largest image accepted, in decoded bytes (5 MiB: the per-image limit of the strictest common provider API). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;

/** The media types an image block may carry; each is checked against the image's own bytes. */
export const IMAGE_MEDIA_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The base64 alphabet with its padding; white space is removed before this test. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WHITE_SPACE = /\s/;
const WHITE_SPACE_ALL = /\s+/g;

/** The media type whose signature the bytes start with, 'svg' for SVG/XML text, or undefined. */
function sniff(head: Uint8Array): string | undefined {
  const startsWith = (bytes: readonly number[], offset = 0): boolean =>
    bytes.every((byte, index) => head[offset + index] === byte);
  if (startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith([0xff, 0xd8, 0xff])) return 'image/jpeg';
  // GIF87a or GIF89a.
  if (startsWith([0x47, 0x49, 0x46, 0x38]) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61) {
    return 'image/gif';
  }
  // RIFF....WEBP
  if (startsWith([0x52, 0x49, 0x46, 0x46]) && startsWith([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  const text = Buffer.from(head).toString('latin1').trimStart().toLowerCase();
  if (text.startsWith('<svg') || text.startsWith('<?xml') || text.startsWith('<!doctype svg')) return 'svg';
  return undefined;
}

/** How many bytes a padded base64 text of `length` characters decodes to. */
function decodedLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * Checks one image block's `data` and `mediaType` and returns them as the session keeps them: the base64
 * without white space (MIME encoders wrap lines) and the media type in lower case. Throws INVALID_INPUT
 * saying what to fix.
 */
export function checkImage(options: { data: unknown; mediaType: unknown; where: string }): {
  data: string;
  mediaType: string;
} {
  const { where } = options;
  if (typeof options.mediaType !== 'string') {
    throw invalidInput(`${where}.mediaType must be one of ${IMAGE_MEDIA_TYPES.join(', ')}`);
  }
  const mediaType = options.mediaType.trim().toLowerCase();
  if (mediaType === 'image/svg+xml') {
    throw invalidInput(`${where} is an SVG, which models do not accept; convert it to PNG first`);
  }
  if (!IMAGE_MEDIA_TYPES.includes(mediaType)) {
    throw invalidInput(
      `${where}.mediaType ${JSON.stringify(options.mediaType)} is not supported; use one of ${IMAGE_MEDIA_TYPES.join(', ')}`,
    );
  }
  if (typeof options.data !== 'string' || options.data.trim() === '') {
    throw invalidInput(`${where}.data must be the image's bytes as non-empty base64 text`);
  }
  // Refused by its length before any work on it: base64 holds 3 bytes in 4 characters.
  if (options.data.length > (IMAGE_MAX_BYTES / 3) * 4 * 1.1 + 4096) throw tooLarge(where);
  const data = WHITE_SPACE.test(options.data) ? options.data.replace(WHITE_SPACE_ALL, '') : options.data;
  if (data.startsWith('data:')) {
    throw invalidInput(`${where}.data is a data: URL; send only the base64 text after the comma`);
  }
  if (data.startsWith('<')) {
    throw invalidInput(
      `${where}.data is markup (an SVG or HTML?), not base64 image bytes; send a PNG, JPEG, GIF or WebP`,
    );
  }
  if (data.length % 4 !== 0 || !BASE64.test(data)) {
    throw invalidInput(
      `${where}.data is not valid base64 (standard alphabet A–Z a–z 0–9 + /, padded with =)`,
    );
  }
  if (decodedLength(data) > IMAGE_MAX_BYTES) throw tooLarge(where);
  // 16 characters decode to the 12 bytes the longest signature (WebP's) needs.
  const found = sniff(Buffer.from(data.slice(0, 16), 'base64'));
  if (found === 'svg') {
    throw invalidInput(`${where}.data holds an SVG, which models do not accept; convert it to PNG first`);
  }
  if (found === undefined) {
    throw invalidInput(
      `${where}.data is not a PNG, JPEG, GIF or WebP image (its first bytes match none of them)`,
    );
  }
  if (found !== mediaType) {
    throw invalidInput(
      `${where}.mediaType says ${mediaType} but the data is ${found}; send the matching media type`,
    );
  }
  return { data, mediaType };
}

function tooLarge(where: string): AgentError {
  return invalidInput(
    `${where} is larger than ${IMAGE_MAX_BYTES} bytes (${IMAGE_MAX_BYTES / 1024 / 1024} MiB); send a smaller or scaled-down image`,
  );
}

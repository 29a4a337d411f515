/**
 * Narrowing helpers for values whose type the compiler cannot know (parsed JSON, events, thrown
 * errors, log lines): each checks at run time what it claims, so a caller decodes instead of casting.
 */
import type { AddressInfo } from 'node:net';

/** Whether a value is a plain object (not null, not an array): the first step of decoding JSON or an event. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a value is an array, narrowed to `readonly unknown[]` (`Array.isArray` narrows to `any[]`). */
export function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

/** The string `code` of a thrown value (`ENOENT`, `EADDRINUSE`, `ERR_MODULE_NOT_FOUND`), or undefined when it has none. */
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** The TCP port of a listening server's `address()`; a pipe or a server not listening is a TypeError. */
export function listeningPort(address: AddressInfo | string | null): number {
  if (address === null || typeof address === 'string') throw new TypeError(`expected a server listening on a TCP port, not ${String(address)}`);
  return address.port;
}

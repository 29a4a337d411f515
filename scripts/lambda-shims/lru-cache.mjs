// Stands in for mnemonist/lru-cache (with obliterator, about 7 KB) inside fenceq's Lambda bundles.
// Its one user is the DynamoDB client's endpoint-discovery cache (@aws-sdk/endpoint-cache), which
// calls `new LRUCache(capacity)`, `get`, `set`, `has`, `peek` and `clear`. A Map keeps insertion
// order, which is all an LRU needs: `get` moves a key to the back, `set` evicts from the front.
export default class LRUCache {
  #capacity;
  #map = new Map();

  constructor(capacity) {
    this.#capacity = capacity;
  }

  get size() {
    return this.#map.size;
  }

  has(key) {
    return this.#map.has(key);
  }

  peek(key) {
    return this.#map.get(key);
  }

  get(key) {
    if (!this.#map.has(key)) return undefined;
    const value = this.#map.get(key);
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key, value) {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) this.#map.delete(this.#map.keys().next().value);
  }

  clear() {
    this.#map.clear();
  }
}

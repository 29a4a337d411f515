// Stands in for @smithy/core's pure-JavaScript SHA-256 and MD5 (about 5 KB) inside fenceq's Lambda
// bundles. They are the fallback for a runtime without node:crypto hashes; Lambda's Node.js has
// them, so the SDK's node:crypto classes are always the ones used there.
const absent = (name) =>
  class {
    constructor() {
      throw new Error(`${name}: node:crypto has no such hash here, and fenceq's Lambda bundles carry no JavaScript fallback`);
    }
  };
export const Sha256Js = absent('sha256');
export const Md5Js = absent('md5');

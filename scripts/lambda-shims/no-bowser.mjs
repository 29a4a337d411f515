// Stands in for bowser (a browser user-agent parser, 35 KB) in every fenceq function: the AWS
// SDK imports it dynamically only in its browser user-agent provider, which Node.js never runs;
// with chunk splitting on, esbuild would still emit it as a chunk of every bundle.
export const parse = () => ({});

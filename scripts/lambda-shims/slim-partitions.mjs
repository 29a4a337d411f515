// Not a stand-in but the rewrite scripts/bundle-functions.mjs applies to the SDK's AWS partitions
// table (about 2 KB of region descriptions in every bundle): its own module, so a test can run it
// without running the build.

/**
 * The AWS partitions table (`partitionsInfo`, read by the endpoint rules' `aws.partition`) without
 * its regions' descriptions: every region name stays, with an empty entry, so a region matches the
 * same partition and gets the same outputs (the rules read the partition's outputs, never a
 * description). Throws when the module is not the one JSON object this expects (an SDK upgrade).
 */
export function withoutRegionDescriptions(source, file) {
  const m = /^export const partitionsInfo = (\{[\s\S]*\});\s*$/.exec(source);
  if (!m) throw new Error(`${file}: not the partitions module scripts/bundle-functions.mjs expects`);
  const info = JSON.parse(m[1]);
  if (!Array.isArray(info.partitions) || info.partitions.some((p) => typeof p.regions !== 'object' || typeof p.outputs !== 'object'))
    throw new Error(`${file}: partitions without regions or outputs`);
  for (const p of info.partitions) {
    for (const [region, data] of Object.entries(p.regions)) {
      const { description, ...rest } = data;
      if (typeof description !== 'string' || Object.keys(rest).length > 0) throw new Error(`${file}: region ${region} carries more than a description`);
      p.regions[region] = {};
    }
  }
  return `export const partitionsInfo = ${JSON.stringify(info)};\n`;
}

// Stands in for src/store/memory/lease-hints.ts (with claim-share.ts, about 2.3 KB) in the JobQueue of
// the fenceq functions that never lease (admin, enqueue, reclaim: leaseDue is absent from their
// bundles, see ABSENT). The hints are one JobQueue's memory for its own lease calls; its writes
// still tell them where a pending job went (wrotePending), which with no lease call in the
// process nothing reads.
export class LeaseHints {
  wrotePending() {}
}

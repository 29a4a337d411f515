// Stands in for croner (33 KB) inside the bundles of fenceq functions that never evaluate a cron
// expression (api, worker): schedules are written through the admin function and fired by the
// reclaim function, whose bundles carry the real croner.
export class Cron {
  constructor() {
    throw new Error('cron expressions are evaluated by the admin and reclaim functions; this function does not carry croner');
  }
}

// Stands in for @aws-lambda-powertools/metrics inside fenceq's reclaim bundle (about 15 KB with
// its share of Powertools commons). fenceq calls only `new Metrics({ namespace, serviceName })`,
// `addDimension`, `addMetric`, `setTimestamp` and `publishStoredMetrics`; this writes the same CloudWatch EMF
// record Powertools writes for those calls. Compared with the real Metrics in
// test/aws/lambda-shims.test.ts.
import { Console } from 'node:console';

/** The units fenceq's health metrics use, as Powertools names them. */
export const MetricUnit = { Count: 'Count', Seconds: 'Seconds', Milliseconds: 'Milliseconds' };

/** The subset of Powertools' Metrics that fenceq's reclaim function calls, with its EMF output. */
export class Metrics {
  #namespace;
  #service;
  #dimensions = {};
  #metrics = new Map();
  #timestamp;
  #console = new Console({ stdout: process.stdout, stderr: process.stderr });

  constructor(options = {}) {
    this.#namespace = options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE;
    this.#service = options.serviceName || process.env.POWERTOOLS_SERVICE_NAME || 'service_undefined';
  }

  addDimension(name, value) {
    this.#dimensions[name] = value;
  }

  addMetric(name, unit, value) {
    const m = this.#metrics.get(name);
    if (m) m.value = Array.isArray(m.value) ? [...m.value, value] : [m.value, value];
    else this.#metrics.set(name, { unit, value });
  }

  setTimestamp(timestamp) {
    this.#timestamp = timestamp instanceof Date ? timestamp.getTime() : timestamp;
  }

  publishStoredMetrics() {
    // Powertools warns when nothing was added; fenceq never publishes an empty record.
    if (this.#metrics.size > 0) {
      const dims = { service: this.#service, ...this.#dimensions };
      const values = Object.fromEntries([...this.#metrics].map(([name, m]) => [name, m.value]));
      const record = {
        _aws: {
          Timestamp: this.#timestamp ?? Date.now(),
          CloudWatchMetrics: [
            { Namespace: this.#namespace, Dimensions: [Object.keys(dims)], Metrics: [...this.#metrics].map(([Name, m]) => ({ Name, Unit: m.unit })) },
          ],
        },
        ...dims,
        ...values,
      };
      this.#console.log(JSON.stringify(record));
    }
    this.#metrics.clear();
    this.#dimensions = {};
    this.#timestamp = undefined;
  }
}

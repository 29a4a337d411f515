// A handlers file as a CommonJS project (`npm init -y`) writes it in TypeScript.
import type { Handler } from 'fenceq';

const shout: Handler = (job) => ({ shouted: String((job.payload as { text: string }).text).toUpperCase() });

export const handlers = { shout };

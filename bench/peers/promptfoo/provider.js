// wopeval bench: the agent promptfoo runs, as a custom JS provider (no model, no network).
//
// config.mode = "tools": an instant scripted agent that calls three canned ("fixtured") tool
//   functions in order, then answers "ok"; the calls and their results go back in the
//   response metadata so promptfoo stores the trajectory with the result.
// config.mode = "sleep": an agent that sleeps config.sleepMs milliseconds, then answers "ok".
'use strict';

const TOOLS = {
  lookup_order: async (args) => ({ orderId: args.order_id, status: 'shipped' }),
  get_customer: async (args) => ({ customerId: args.customer_id, tier: 'gold' }),
  quote_refund: async (_args) => ({ approved: true }),
};

const CALLS = [
  ['lookup_order', { order_id: 'A1' }],
  ['get_customer', { customer_id: 'C1' }],
  ['quote_refund', { order_id: 'A1', amount: 12.5 }],
];

class WopevalBenchProvider {
  constructor(options) {
    this.config = (options && options.config) || {};
  }

  id() {
    return 'wopeval-bench';
  }

  async callApi(_prompt) {
    if (this.config.mode === 'sleep') {
      await new Promise((resolve) => setTimeout(resolve, this.config.sleepMs));
      return { output: 'ok' };
    }
    const toolCalls = [];
    for (const [name, args] of CALLS) {
      toolCalls.push({ name, args, result: await TOOLS[name](args) });
    }
    return { output: 'ok', metadata: { toolCalls } };
  }
}

module.exports = WopevalBenchProvider;

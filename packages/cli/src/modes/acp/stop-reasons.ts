import type { Observation, Plugin } from '@youyou/agent';

/** The model's stop reasons, as `model_call_end` observations report them. */
type ModelStopReason = Extract<Observation, { type: 'model_call_end' }>['stopReason'];

/**
 * Remembers why each turn's last model call stopped, so that a turn whose answer was cut by the output limit
 * answers `max_tokens` rather than `end_turn` (the turn's own events do not say it).
 */
export class TurnStopReasons {
  readonly #lastByTurn = new Map<string, ModelStopReason>();

  /** The plugin that watches the model calls; registered on the runtime. */
  readonly plugin: Plugin = {
    id: 'youyou-acp-stop-reasons',
    displayName: 'ACP stop reasons',
    description: "Keeps each turn's last model stop reason for the editor's prompt answer.",
    initialize: async () => {},
    apply: (context) => {
      context.observe((observation) => {
        if (observation.type !== 'model_call_end' || observation.purpose !== 'turn') return;
        if (observation.turnId !== undefined)
          this.#lastByTurn.set(observation.turnId, observation.stopReason);
      });
    },
    shutdown: async () => {},
  };

  /** Why the last model call of `turnId` stopped (and forgets it). */
  take(turnId: string): ModelStopReason {
    const reason = this.#lastByTurn.get(turnId);
    this.#lastByTurn.delete(turnId);
    return reason;
  }
}

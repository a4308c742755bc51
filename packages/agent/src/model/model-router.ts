import { AgentError } from '../kernel/error.js';
import type { ModelInfo, ModelProvider } from '../ports/model.js';

/** A model and the provider that serves it. */
export interface RoutedModel {
  provider: ModelProvider;
  info: ModelInfo;
}

/** Finds the provider of a model id (0006 §7.1). */
export class ModelRouter {
  private readonly routes = new Map<string, RoutedModel>();

  /** Indexes every model of the providers; the builder has already rejected duplicates. */
  constructor(providers: readonly ModelProvider[]) {
    for (const provider of providers) {
      for (const info of provider.models) this.routes.set(info.id, { provider, info });
    }
  }

  /** The route of a model id, or undefined. */
  find(modelId: string): RoutedModel | undefined {
    return this.routes.get(modelId);
  }

  /** The route of a model id; throws MODEL_NOT_SUPPORTED. */
  resolve(modelId: string): RoutedModel {
    const route = this.routes.get(modelId);
    if (route === undefined) {
      throw new AgentError({
        code: 'MODEL_NOT_SUPPORTED',
        message: `model '${modelId}' is not offered by any registered provider`,
      });
    }
    return route;
  }
}

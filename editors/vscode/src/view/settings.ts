/**
 * The extension's typed settings as the server's own settings (contract: Configuration):
 * `{"tether": {...}}` in `initializationOptions`, then `workspace/didChangeConfiguration`
 * with section `tether`. Only what the person set is sent, so the server's defaults and
 * its environment (`TETHER_MODEL`, `tether.env`...) hold for everything else. The API key
 * comes from VS Code's SecretStorage, never from settings.json.
 */

/** A VS Code setting (under `tether.`) and the server's key it sets. */
export const SETTINGS = [
  { setting: 'provider.kind', key: ['provider', 'kind'], type: 'enum', values: ['openai', 'anthropic'] },
  { setting: 'provider.model', key: ['provider', 'model'], type: 'string' },
  { setting: 'provider.baseUrl', key: ['provider', 'base_url'], type: 'string' },
  { setting: 'turn.toolBudget', key: ['turn', 'tool_budget'], type: 'integer', minimum: 1 },
  { setting: 'turn.repeatLimit', key: ['turn', 'repeat_limit'], type: 'integer', minimum: 2 },
  { setting: 'approval.dialogs', key: ['approval', 'dialogs'], type: 'boolean' },
] as const;

export const API_KEY = ['provider', 'api_key'] as const;

export type Layer = Record<string, Record<string, unknown>>;

/**
 * The server's settings layer from what the person set: `explicit(setting)` is the value
 * they gave (user, workspace or folder), undefined where they gave none. Empty strings and
 * values of the wrong type are left out (the server would only reject them).
 */
export function serverLayer(explicit: (setting: string) => unknown, apiKey?: string): Layer {
  const layer: Layer = {};
  const put = (key: readonly [string, string], value: unknown): void => {
    (layer[key[0]] ??= {})[key[1]] = value;
  };
  for (const spec of SETTINGS) {
    const value = explicit(spec.setting);
    switch (spec.type) {
      case 'enum':
        if (typeof value === 'string' && (spec.values as readonly string[]).includes(value)) {
          put(spec.key, value);
        }
        break;
      case 'string':
        if (typeof value === 'string' && value.trim() !== '') {
          put(spec.key, value.trim());
        }
        break;
      case 'integer':
        if (typeof value === 'number' && Number.isInteger(value) && value >= spec.minimum) {
          put(spec.key, value);
        }
        break;
      case 'boolean':
        if (typeof value === 'boolean') {
          put(spec.key, value);
        }
        break;
    }
  }
  if (apiKey !== undefined && apiKey !== '') {
    put(API_KEY, apiKey);
  }
  return layer;
}

/**
 * Keys `before` gave that `now` does not. The server keeps its `initializationOptions`
 * beneath every later change, so a key given at start that is unset later can only be
 * dropped by starting the server again.
 */
export function droppedKeys(before: Layer, now: Layer): string[] {
  const dropped: string[] = [];
  for (const [section, values] of Object.entries(before)) {
    for (const key of Object.keys(values)) {
      if (!(key in (now[section] ?? {}))) {
        dropped.push(`${section}.${key}`);
      }
    }
  }
  return dropped;
}

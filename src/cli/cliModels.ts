import { ConfigError } from '../core/errors';
import { endpointModels, envSecrets, type ModelFactory } from '../core/llm/factory';

/**
 * The CLI's model port (`ralph run`, `ralph plan`, `ralph task council`): the OpenAI-compatible
 * endpoints with keys from the environment. The editor's own models (`llm.provider` "vscode")
 * are only reachable inside VS Code: `there` says what to do instead.
 */
export function cliModels(configFile: string, there: string): ModelFactory {
  const endpoints = endpointModels(envSecrets);
  return async (config, notices) => {
    if (config.llm.provider === 'vscode') {
      throw new ConfigError(
        `llm.provider is "vscode" in ${configFile}: the editor's models are only reachable inside VS Code (${there}). The ralph CLI talks to OpenAI-compatible endpoints: to work here, set "llm.provider": "openai" with llm.baseUrl / llm.apiKeyEnv and OpenAI model names in llm.models.`,
        configFile,
      );
    }
    return endpoints(config, notices);
  };
}

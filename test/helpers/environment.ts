/** This process's environment without the variables that start with `prefix` (a platform's, set on the machine running the tests), plus `extra`. */
export function environmentWithout(prefix: string, extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith(prefix)) env[key] = value;
  return { ...env, ...extra };
}

/** `message` with every secret replaced by `***`. */
export function redactSecrets(message: string, secrets: readonly string[]): string {
  return secrets.reduce((text, secret) => text.split(secret).join('***'), message);
}

import { ErrorCodes, ThvError } from '../errors.js';

/** A `--secret NAME,target=VAR` reference (ToolHive's regex `^([^,]+),target=(.+)$`). */
export interface SecretRef {
  name: string;
  target: string;
}

const REF = /^([^,]+),target=(.+)$/;

export function parseSecretRef(ref: string): SecretRef {
  const m = REF.exec(ref);
  if (!m) {
    throw new ThvError(ErrorCodes.InvalidArgument, `invalid secret reference ${JSON.stringify(ref)}: expected NAME,target=ENV_VAR`);
  }
  return { name: m[1]!, target: m[2]! };
}

export function formatSecretRef(ref: SecretRef): string {
  return `${ref.name},target=${ref.target}`;
}

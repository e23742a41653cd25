import type { RegistryEntry } from './types.js';

/**
 * How entries are shown: JSON in ToolHive's ImageMetadata / RemoteServerMetadata shape (snake_case), and
 * aligned text tables for people.
 */
export function entryToJson(e: RegistryEntry): Record<string, unknown> {
  const envVars = e.envVars.map((v) => ({ name: v.name, description: v.description ?? '', required: v.required, default: v.default, secret: v.secret || undefined }));
  const base: Record<string, unknown> = {
    name: e.name,
    title: e.title,
    description: e.description,
    tier: e.tier,
    status: e.status,
    transport: e.transport,
    tools: e.tools,
    tags: e.tags.length > 0 ? e.tags : undefined,
    repository_url: e.repositoryUrl,
    proxy_port: e.proxyPort,
    stateless: e.stateless,
  };
  if (e.kind === 'remote') {
    Object.assign(base, {
      url: e.url,
      headers: e.headers && e.headers.length > 0 ? e.headers.map((h) => ({ name: h.name, description: h.description ?? '', required: h.required, secret: h.secret || undefined })) : undefined,
      oauth_config: e.oauthConfig,
      env_vars: envVars.length > 0 ? envVars : undefined,
    });
  } else {
    Object.assign(base, {
      image: e.image,
      // Our additions: the packages the process runtime runs.
      npm_package: e.npmPackage,
      pypi_package: e.pypiPackage,
      target_port: e.targetPort,
      permissions: e.permissions,
      env_vars: envVars.length > 0 ? envVars : undefined,
      args: e.args,
    });
  }
  return JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

export function entriesTable(entries: readonly RegistryEntry[]): string {
  const rows = [['NAME', 'TYPE', 'TRANSPORT', 'TIER', 'STATUS', 'DESCRIPTION']];
  for (const e of entries) {
    rows.push([e.name, e.kind === 'remote' ? 'remote' : 'server', e.transport, e.tier ?? '', e.status ?? '', truncate(e.description, 60)]);
  }
  return table(rows);
}

export function entryText(e: RegistryEntry): string {
  const lines: string[] = [];
  const add = (k: string, v: string | undefined): void => {
    if (v !== undefined && v !== '') lines.push(`${`${k}:`.padEnd(14)}${v}`);
  };
  add('Name', e.name);
  add('Title', e.title);
  add('Description', e.description);
  add('Type', e.kind === 'remote' ? 'remote' : 'server');
  add('Version', e.version);
  add('Tier', e.tier);
  add('Status', e.status);
  add('Transport', e.transport);
  add('URL', e.url);
  add('Image', e.image);
  add('npm package', e.npmPackage);
  add('PyPI package', e.pypiPackage);
  add('Target port', e.targetPort?.toString());
  add('Repository', e.repositoryUrl);
  add('Tags', e.tags.join(', '));
  add('Tools', e.tools.join(', '));
  add('Args', e.args?.join(' '));
  const vars = [...e.envVars, ...(e.headers ?? []).map((h) => ({ ...h, name: `header ${h.name}` }))];
  if (vars.length > 0) {
    lines.push('Environment variables:');
    for (const v of vars) {
      const flags = [v.required ? 'required' : 'optional', v.secret ? 'secret' : undefined, v.default !== undefined ? `default ${v.default}` : undefined]
        .filter(Boolean)
        .join(', ');
      lines.push(`  - ${v.name} (${flags})${v.description ? `: ${v.description}` : ''}`);
    }
  }
  if (e.permissions !== undefined) lines.push(`Permissions:  ${JSON.stringify(e.permissions)}`);
  lines.push('', `Run it with: thv run ${e.name}`);
  return lines.join('\n') + '\n';
}

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { Logger } from '../../logging.js';
import { toolhiveDir } from '../../secrets/xdg.js';

export interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Splits a profile mount declaration: `path`, `host:container`, or `scheme://resource:container`. */
export function parseMountDeclaration(decl: string): { source: string; target: string } | { resourceUri: string } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(decl)) return { resourceUri: decl };
  const idx = decl.lastIndexOf(':');
  // `C:\x` style Windows sources keep their drive letter.
  if (idx <= 0 || (idx === 1 && /^[A-Za-z]$/.test(decl[0]!))) return { source: decl, target: decl };
  return { source: decl.slice(0, idx), target: decl.slice(idx + 1) };
}

/** Bind mounts from the profile: `read` → read-only, `write` → read-write (a write entry wins over a read one). */
export function profileMounts(profile: Record<string, unknown> | undefined, logger: Logger): Mount[] {
  const byTarget = new Map<string, Mount>();
  const add = (list: unknown, readOnly: boolean): void => {
    if (!Array.isArray(list)) return;
    for (const decl of list) {
      if (typeof decl !== 'string') continue;
      const parsed = parseMountDeclaration(decl);
      if ('resourceUri' in parsed) {
        logger.warn({ mount: parsed.resourceUri }, 'resource URI mounts are not supported; skipped');
        continue;
      }
      const source = path.resolve(parsed.source);
      const existing = byTarget.get(parsed.target);
      if (existing && !readOnly) existing.readOnly = false;
      else if (!existing) byTarget.set(parsed.target, { source, target: parsed.target, readOnly });
    }
  };
  add(profile?.['read'], true);
  add(profile?.['write'], false);
  return [...byTarget.values()];
}

function readPatterns(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  } catch {
    return [];
  }
}

/** Relative paths under `dir` (bounded walk) matching a glob pattern. */
function globUnder(dir: string, pattern: string, limit = 20_000): string[] {
  const out: string[] = [];
  let seen = 0;
  const walk = (rel: string): void => {
    let entries;
    try {
      entries = readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++seen > limit) return;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const matches = path.matchesGlob(r, pattern) || (!pattern.includes('/') && path.matchesGlob(e.name, pattern));
      if (matches) out.push(r);
      else if (e.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

/**
 * The empty directory or file mounted (read-only) over hidden paths. One of each under thv's data
 * directory serves every workload: it must outlive the container (a restarted container mounts it
 * again), and a fresh temporary one per run would be left behind by every removal.
 */
function emptyOverlay(kind: 'dir' | 'file'): string {
  const root = path.join(toolhiveDir('data'), 'thvignore-overlay');
  mkdirSync(path.join(root, 'dir'), { recursive: true });
  const file = path.join(root, 'file');
  if (!existsSync(file)) writeFileSync(file, '');
  return kind === 'dir' ? path.join(root, 'dir') : file;
}

/**
 * `.thvignore` overlays: every path of a mounted directory that a pattern (global file, unless turned off,
 * plus the directory's own `.thvignore`) matches is hidden behind an empty directory or file mounted over it.
 */
export function ignoreOverlays(mounts: Mount[], options: { loadGlobal: boolean; print: boolean }, logger: Logger): Mount[] {
  const globalPatterns = options.loadGlobal ? readPatterns(path.join(homedir(), '.config/toolhive/thvignore')) : [];
  const overlays: Mount[] = [];
  let emptyDir: string | undefined;
  let emptyFile: string | undefined;
  for (const m of mounts) {
    let isDir = false;
    try {
      isDir = statSync(m.source).isDirectory();
    } catch {
      continue;
    }
    if (!isDir) continue;
    const patterns = [...globalPatterns, ...readPatterns(path.join(m.source, '.thvignore'))];
    const hidden = new Set<string>();
    for (const raw of patterns) {
      const p = raw.replace(/^\/+/, '');
      if (p.endsWith('/')) {
        const d = p.slice(0, -1);
        if (existsSync(path.join(m.source, d)) && statSync(path.join(m.source, d)).isDirectory()) hidden.add(d);
        else for (const r of globUnder(m.source, d)) hidden.add(r);
      } else if (existsSync(path.join(m.source, p))) hidden.add(p);
      else for (const r of globUnder(m.source, p)) hidden.add(r);
    }
    for (const rel of hidden) {
      const dir = statSync(path.join(m.source, rel)).isDirectory();
      if (dir) emptyDir ??= emptyOverlay('dir');
      else emptyFile ??= emptyOverlay('file');
      const target = path.posix.join(m.target, rel);
      // Read-only (ToolHive mounts them read-write): nothing needs to write into a hidden path.
      overlays.push({ source: dir ? emptyDir! : emptyFile!, target, readOnly: true });
      if (options.print) logger.info({ path: target, kind: dir ? 'directory' : 'file' }, 'hidden by .thvignore');
    }
  }
  return overlays;
}

import { readFileSync } from 'node:fs';
import type { SandboxProbe } from './sandbox';

/** What to do about a missing sandbox, in words a person acts on: the one command that installs it, where there is one. */
export interface SandboxAdvice {
  /** The command that installs the sandbox here (`sudo apt-get install bubblewrap`), when one does. */
  install?: string;
  /** The whole fix, one sentence. */
  fix: string;
}

/** Package managers by the distribution families of /etc/os-release (`ID` and `ID_LIKE`). */
const INSTALLERS: readonly [RegExp, string][] = [
  [/\b(?:debian|ubuntu|linuxmint|pop|raspbian)\b/, 'sudo apt-get install bubblewrap'],
  [/\b(?:fedora|rhel|centos|rocky|almalinux|amzn)\b/, 'sudo dnf install bubblewrap'],
  [/\b(?:arch|manjaro|endeavouros)\b/, 'sudo pacman -S bubblewrap'],
  [/\b(?:opensuse|suse|sles)\b/, 'sudo zypper install bubblewrap'],
  [/\balpine\b/, 'sudo apk add bubblewrap'],
  [/\bnixos\b/, 'nix-env -iA nixpkgs.bubblewrap'],
];

/** The distribution's words in /etc/os-release (`ID=…`, `ID_LIKE=…`), lower case; empty when unreadable. */
export function osReleaseIds(text?: string): string {
  let source = text;
  if (source === undefined) {
    try {
      source = readFileSync('/etc/os-release', 'utf8');
    } catch {
      return '';
    }
  }
  return [...source.matchAll(/^(?:ID|ID_LIKE)=["']?([^"'\n]*)/gm)].map((m) => m[1].toLowerCase()).join(' ');
}

/** The command that installs bubblewrap on this Linux distribution. */
export function bubblewrapInstall(ids = osReleaseIds()): string {
  return INSTALLERS.find(([pattern]) => pattern.test(ids))?.[1] ?? 'sudo apt-get install bubblewrap';
}

/** How to get a sandbox where the probe found none. */
export function sandboxAdvice(probe: SandboxProbe, platform: NodeJS.Platform = process.platform, ids?: string): SandboxAdvice {
  if (platform === 'linux') {
    if (/fails here/.test(probe.reason))
      return {
        fix: 'bubblewrap is installed but cannot create namespaces: allow unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), or run in a container that allows them',
      };
    const install = bubblewrapInstall(ids);
    return { install, fix: `install bubblewrap: ${install}` };
  }
  if (platform === 'darwin')
    return { fix: '/usr/bin/sandbox-exec is part of macOS; check that it runs (sandbox-exec -p "(version 1)(allow default)" true)' };
  return { fix: `no sandbox exists on ${platform}: run Ralph inside WSL 2 (Linux, with bubblewrap) to confine the agent's commands` };
}

/** The warning a run without a sandbox gives at its start: what it means and the one thing to do. */
export function noSandboxWarning(probe: SandboxProbe, sandbox: 'auto' | 'off', platform: NodeJS.Platform = process.platform): string {
  const why = sandbox === 'off' ? 'commands.sandbox is "off"' : `no sandbox here (${probe.reason})`;
  const advice = sandbox === 'off' ? undefined : sandboxAdvice(probe, platform);
  return (
    `${why}: the agent's commands and the gates run with your user's rights — the command rules ask before code they cannot read (node -e, python -c, a script the task wrote) and .ralph/ is guarded, but anything they allow can write outside the workspace and reach the network.` +
    (advice ? ` To confine them, ${advice.fix}.` : '') +
    ' Set commands.sandbox to "required" to refuse to run without one.'
  );
}

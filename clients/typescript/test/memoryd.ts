// Starts a real `memoryd serve` (embedded SQLite in a temporary directory) for
// tests, and the fault proxy of tests/clients/fault_proxy.py in front of one.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface Memoryd {
  address: string;
  stop(): Promise<void>;
}

/** $MEMORYD_BIN, else .venv/bin/memoryd of the enclosing repository, else undefined. */
export function memorydExecutable(): string | undefined {
  if (process.env.MEMORYD_BIN) return resolve(process.env.MEMORYD_BIN);
  const root = repository();
  const candidate = root && join(root, ".venv", "bin", "memoryd");
  return candidate && existsSync(candidate) ? resolve(candidate) : undefined;
}

/** The checkout holding this package: the nearest parent with tests/clients/fault_proxy.py. */
export function repository(): string | undefined {
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "tests", "clients", "fault_proxy.py"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

export async function startMemoryd(bin: string, env: Record<string, string> = {}): Promise<Memoryd> {
  const dir = mkdtempSync(join(tmpdir(), "memoryd-ts-"));
  const portFile = join(dir, "port");
  const args = ["serve", "--listen", "127.0.0.1:0", "--port-file", portFile, "--data-dir", join(dir, "data")];
  return serve(bin, args, { env: { ...process.env, ...env } }, dir, portFile);
}

/**
 * The fault-injecting proxy in front of `upstream` (with the Python next to the
 * memoryd executable). Calls choose faults with headers: memoryd-test-fault,
 * memoryd-test-lost-ack, memoryd-test-cut (see tests/clients/live.py).
 */
export async function startProxy(bin: string, upstream: Memoryd): Promise<Memoryd> {
  const dir = mkdtempSync(join(tmpdir(), "memoryd-proxy-"));
  const portFile = join(dir, "port");
  const args = ["-m", "tests.clients.fault_proxy", "--upstream", upstream.address, "--port-file", portFile];
  return serve(join(dirname(bin), "python"), args, { cwd: repository() }, dir, portFile);
}

/**
 * The test OIDC issuer of tests/security/oidc_issuer.py: discovery document and
 * JWKS on loopback (serve memoryd with MEMORYD_OIDC_ISSUER=http://<address> and
 * MEMORYD_JWT_AUDIENCE=memoryd-test), and GET /mint?tenant=..&lifetime=<s>,
 * which answers a token it signed.
 */
export async function startIssuer(bin: string): Promise<Memoryd> {
  const dir = mkdtempSync(join(tmpdir(), "memoryd-issuer-"));
  const portFile = join(dir, "port");
  const args = ["-m", "tests.security.oidc_issuer", "--port-file", portFile];
  return serve(join(dirname(bin), "python"), args, { cwd: repository() }, dir, portFile);
}

async function serve(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string },
  dir: string,
  portFile: string,
): Promise<Memoryd> {
  const child: ChildProcess = spawn(command, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk) => (log += chunk));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (existsSync(portFile)) {
      const port = readFileSync(portFile, "utf8").trim();
      if (port) return { address: `127.0.0.1:${port}`, stop };
    }
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}:\n${log}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${command} did not start:\n${log}`);
    }
    await sleep(50);
  }
}

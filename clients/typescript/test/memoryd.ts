// Starts a real `memoryd serve` (embedded SQLite in a temporary directory) for tests.
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
  if (process.env.MEMORYD_BIN) return process.env.MEMORYD_BIN;
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    const candidate = join(dir, ".venv", "bin", "memoryd");
    if (existsSync(candidate)) return resolve(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

export async function startMemoryd(bin: string): Promise<Memoryd> {
  const dir = mkdtempSync(join(tmpdir(), "memoryd-ts-"));
  const portFile = join(dir, "port");
  const child: ChildProcess = spawn(
    bin,
    ["serve", "--listen", "127.0.0.1:0", "--port-file", portFile, "--data-dir", join(dir, "data")],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
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
    if (child.exitCode !== null) throw new Error(`memoryd exited with ${child.exitCode}:\n${log}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`memoryd did not start:\n${log}`);
    }
    await sleep(50);
  }
}

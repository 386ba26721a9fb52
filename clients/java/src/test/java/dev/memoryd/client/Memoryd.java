package dev.memoryd.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real `memoryd serve` (embedded SQLite in a temporary directory) for tests, or the fault
 * proxy of tests/clients/fault_proxy.py in front of one: both child processes that write their
 * port to a file once serving.
 */
final class Memoryd implements AutoCloseable {
  final String target;
  private final Process process;
  private final Path dir;

  private Memoryd(String target, Process process, Path dir) {
    this.target = target;
    this.process = process;
    this.dir = dir;
  }

  /** $MEMORYD_BIN, else .venv/bin/memoryd of the enclosing repository, else null. */
  static Path executable() {
    String explicit = System.getenv("MEMORYD_BIN");
    if (explicit != null && !explicit.isEmpty()) {
      return Path.of(explicit).toAbsolutePath();
    }
    Path root = repository();
    return root == null ? null : root.resolve(".venv/bin/memoryd");
  }

  /** The checkout holding this project: the nearest parent with tests/clients/fault_proxy.py. */
  static Path repository() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve("tests/clients/fault_proxy.py"))) {
        return dir;
      }
    }
    return null;
  }

  /** memoryd with extra environment (e.g. MEMORYD_TOKENS). */
  static Memoryd start(Path bin, Map<String, String> env) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("memoryd-java-");
    return spawn(
        List.of(bin.toString(), "serve", "--listen", "127.0.0.1:0", "--port-file", dir.resolve("port").toString(),
            "--data-dir", dir.resolve("data").toString()),
        env, dir, null);
  }

  /** The fault-injecting proxy in front of {@code upstream} (its Python is memoryd's). */
  static Memoryd proxy(Path bin, Memoryd upstream) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("memoryd-proxy-");
    return spawn(
        List.of(bin.resolveSibling("python").toString(), "-m", "tests.clients.fault_proxy",
            "--upstream", upstream.target, "--port-file", dir.resolve("port").toString()),
        Map.of(), dir, repository());
  }

  /**
   * The test OIDC issuer of tests/security/oidc_issuer.py: discovery document and JWKS on loopback
   * (serve memoryd with MEMORYD_OIDC_ISSUER=http://target and MEMORYD_JWT_AUDIENCE=memoryd-test),
   * and GET /mint?tenant=..&lifetime=seconds, which answers a token it signed.
   */
  static Memoryd issuer(Path bin) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("memoryd-issuer-");
    return spawn(
        List.of(bin.resolveSibling("python").toString(), "-m", "tests.security.oidc_issuer",
            "--port-file", dir.resolve("port").toString()),
        Map.of(), dir, repository());
  }

  private static Memoryd spawn(List<String> command, Map<String, String> env, Path dir, Path cwd)
      throws IOException, InterruptedException {
    Path portFile = dir.resolve("port");
    Path log = dir.resolve("log");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    if (cwd != null) {
      builder.directory(cwd.toFile());
    }
    Process process = builder.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      if (Files.exists(portFile)) {
        String port = Files.readString(portFile).trim();
        if (!port.isEmpty()) {
          return new Memoryd("127.0.0.1:" + port, process, dir);
        }
      }
      if (!process.isAlive() || System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException(command.get(0) + " did not start:\n" + Files.readString(log));
      }
      Thread.sleep(50);
    }
  }

  @Override
  public void close() throws Exception {
    process.destroy(); // SIGTERM: graceful shutdown
    if (!process.waitFor(15, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}

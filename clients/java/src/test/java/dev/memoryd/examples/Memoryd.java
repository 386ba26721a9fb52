package dev.memoryd.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** A real `memoryd serve` (embedded SQLite in a temporary directory) for tests. */
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
      return Path.of(explicit);
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve(".venv/bin/memoryd");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  static Memoryd start(Path bin) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("memoryd-java-");
    Path portFile = dir.resolve("port");
    Path log = dir.resolve("memoryd.log");
    Process process =
        new ProcessBuilder(
                bin.toString(), "serve",
                "--listen", "127.0.0.1:0",
                "--port-file", portFile.toString(),
                "--data-dir", dir.resolve("data").toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
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
        throw new IllegalStateException("memoryd did not start:\n" + Files.readString(log));
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

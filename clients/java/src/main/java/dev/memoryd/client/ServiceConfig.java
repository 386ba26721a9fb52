package dev.memoryd.client;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The contract's gRPC service config: which RPCs gRPC retries (on UNAVAILABLE) and how.
 *
 * <p>The document is {@code memoryd/v1/memoryd_grpc_service_config.json}, the same file every
 * language's client ships (proto/memoryd/v1 in the repository; see docs/CLIENTS.md for the
 * classification). The idempotent RPCs carry a retry policy, the others none.
 */
public final class ServiceConfig {
  /** Where the document lies on the class path. */
  public static final String RESOURCE = "/memoryd/v1/memoryd_grpc_service_config.json";

  private ServiceConfig() {}

  /** The service config as the Map that {@code ManagedChannelBuilder.defaultServiceConfig} takes. */
  public static Map<String, ?> contract() {
    try (InputStream in = ServiceConfig.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the class path");
      }
      // Gson reads JSON numbers as Double, lists as List and objects as Map: the shapes gRPC's
      // service config parser expects.
      return new Gson()
          .fromJson(
              new String(in.readAllBytes(), StandardCharsets.UTF_8),
              new TypeToken<Map<String, Object>>() {}.getType());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

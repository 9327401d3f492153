package io.windowlimiter.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A runnable Spring Cloud Gateway with the window rate limiter. Without any Redis configured it
 * starts an embedded one (see demo-support's {@code EmbeddedRedisEnvironmentPostProcessor}), so it runs out of the box.
 */
@SpringBootApplication
public class GatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(GatewayApplication.class, args);
	}

}

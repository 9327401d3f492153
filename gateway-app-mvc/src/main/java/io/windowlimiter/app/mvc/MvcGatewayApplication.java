package io.windowlimiter.app.mvc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A runnable Spring Cloud Gateway Server MVC with the window rate limiter: the same demo route as
 * gateway-app's, on servlet threads (virtual ones with {@code --spring.threads.virtual.enabled=true} on
 * Java 21+). Without any Redis configured it starts an embedded one (demo-support), so it runs out of the box.
 */
@SpringBootApplication
public class MvcGatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(MvcGatewayApplication.class, args);
	}

}

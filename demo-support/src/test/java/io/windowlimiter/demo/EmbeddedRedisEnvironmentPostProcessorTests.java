package io.windowlimiter.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link EmbeddedRedisEnvironmentPostProcessor} starts a server, and that it starts only one.
 */
class EmbeddedRedisEnvironmentPostProcessorTests {

	private final EmbeddedRedisEnvironmentPostProcessor postProcessor = new EmbeddedRedisEnvironmentPostProcessor(
			Supplier::get);

	@ParameterizedTest
	@ValueSource(strings = { "spring.data.redis.host", "spring.data.redis.port", "spring.data.redis.url",
			"spring.data.redis.cluster.nodes", "spring.data.redis.cluster.nodes[0]",
			"spring.data.redis.sentinel.master", "spring.data.redis.masterreplica.nodes" })
	void configuredRedisTurnsItOff(String property) {
		MockEnvironment environment = new MockEnvironment().withProperty(property, "redis.example.com");
		SpringApplication application = new SpringApplication();
		int listeners = application.getListeners().size();
		this.postProcessor.postProcessEnvironment(environment, application);
		assertThat(environment.getPropertySources().contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME))
			.isFalse();
		assertThat(application.getListeners()).hasSize(listeners);
	}

	@Test
	void disabledTurnsItOff() {
		MockEnvironment environment = new MockEnvironment()
			.withProperty(EmbeddedRedisEnvironmentPostProcessor.ENABLED_PROPERTY, "false");
		this.postProcessor.postProcessEnvironment(environment, new SpringApplication());
		assertThat(environment.containsProperty("spring.data.redis.host")).isFalse();
		assertThat(environment.containsProperty("spring.data.redis.port")).isFalse();
	}

	@Test
	void startsOneServerForAllApplications() throws IOException {
		SpringApplication first = new SpringApplication();
		SpringApplication second = new SpringApplication();
		MockEnvironment firstEnvironment = new MockEnvironment();
		MockEnvironment secondEnvironment = new MockEnvironment();
		this.postProcessor.postProcessEnvironment(firstEnvironment, first);
		this.postProcessor.postProcessEnvironment(secondEnvironment, second);
		try {
			assertThat(firstEnvironment.getProperty("spring.data.redis.host"))
				.isEqualTo(EmbeddedRedisEnvironmentPostProcessor.HOST);
			int port = firstEnvironment.getRequiredProperty("spring.data.redis.port", Integer.class);
			assertThat(secondEnvironment.getRequiredProperty("spring.data.redis.port", Integer.class)).isEqualTo(port);
			assertThat(ping(port)).isEqualTo("+PONG");
		}
		finally {
			// As if both applications failed to start: each gives its share back.
			fail(first);
			fail(second);
		}
	}

	private static void fail(SpringApplication application) {
		ApplicationEvent event = new ApplicationFailedEvent(application, new String[0], null,
				new IllegalStateException("test"));
		for (ApplicationListener<?> listener : application.getListeners()) {
			if (listener instanceof EmbeddedRedisEnvironmentPostProcessor.ReleaseOnClose release) {
				release.onApplicationEvent(event);
			}
		}
	}

	private static String ping(int port) throws IOException {
		try (Socket socket = new Socket(EmbeddedRedisEnvironmentPostProcessor.HOST, port)) {
			socket.setSoTimeout(5000);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			StringBuilder reply = new StringBuilder();
			for (int c = in.read(); c != -1 && c != '\r'; c = in.read()) {
				reply.append((char) c);
			}
			return reply.toString();
		}
	}

}

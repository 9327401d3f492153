package io.windowlimiter.gateway.filter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A metered OpenAI stream whose upstream sent a Content-Length, for a client that did not ask for the usage: the
 * gateway strips the usage chunk, so the length is dropped; the response must then go out chunked and keep the
 * client's connection, not end by closing it (found by the SSE benchmark: every such response closed it).
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MeteredKeepAliveTests {

	private static final String STREAM = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
			+ "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n"
			+ "data: [DONE]\n\n";

	private static final LoopResources loops = LoopResources.create("keep-alive-downstream", 1, true);

	/** Answers every request with the whole stream at once and its Content-Length, as a static file server does. */
	static final DisposableServer downstream = HttpServer.create().runOn(loops).host("127.0.0.1").port(0)
		.handle((request, response) -> {
			byte[] body = STREAM.getBytes(StandardCharsets.UTF_8);
			return request.receive().then(response.header("Content-Type", "text/event-stream")
				.header("Content-Length", Integer.toString(body.length))
				.sendByteArray(Mono.just(body))
				.then());
		})
		.bindNow();

	@Value("${local.server.port}")
	private int port;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		String route = "spring.cloud.gateway.server.webflux.routes[0].";
		registry.add(route + "id", () -> "chat");
		registry.add(route + "uri", () -> "http://127.0.0.1:" + downstream.port());
		registry.add(route + "predicates[0]", () -> "Path=/v1/**");
		registry.add(route + "filters[0].name", () -> "WindowRateLimit");
		registry.add(route + "filters[0].args.key-resolver", () -> "#{@headerKeyResolver}");
		registry.add(route + "filters[0].args.llm", () -> "openai");
		registry.add(route + "filters[0].args.limits[0].limit", () -> "100000");
		registry.add(route + "filters[0].args.limits[0].window", () -> "1m");
		registry.add(route + "filters[0].args.limits[0].unit", () -> "tokens");
	}

	@AfterAll
	static void stop() {
		downstream.disposeNow();
		loops.dispose();
	}

	@Test
	void aStrippedStreamGoesOutChunkedAndKeepsTheConnection() throws IOException {
		String body = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: keep-alive\r\n"
					+ "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			String head = head(socket.getInputStream()).toLowerCase(Locale.ROOT);
			assertThat(head).startsWith("http/1.1 200");
			assertThat(head).doesNotContain("content-length");
			assertThat(head).doesNotContain("connection: close");
			assertThat(head).contains("transfer-encoding: chunked");
		}
	}

	/** The response's status line and headers. */
	private static String head(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		int matched = 0;
		byte[] end = { '\r', '\n', '\r', '\n' };
		while (matched < end.length) {
			int b = in.read();
			if (b < 0) {
				break;
			}
			head.write(b);
			matched = (b == end[matched]) ? matched + 1 : (b == '\r') ? 1 : 0;
		}
		return head.toString(StandardCharsets.UTF_8);
	}

}

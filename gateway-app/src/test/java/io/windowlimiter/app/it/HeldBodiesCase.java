package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 44's attack on LLM routes, on either jar (WebFlux and Server MVC): {@value #CONNECTIONS} connections each
 * send a chunked chat request body of {@value #BYTES_EACH} bytes (under the route's default {@code max-body-bytes}
 * of 4 MB) and never end it, {@value #CONNECTIONS} times that being more than the JVM's heap
 * ({@value #HEAP}). Before the buffered-body budget, the gateway buffered every one of them: Server MVC ran out of
 * heap (its acceptor and the limiter's watchdog died, it answered nothing more until restarted), WebFlux out of
 * direct memory (500s, honest calls timing out).
 * <p>
 * Asserted: while the bodies are held, every attacker is either still being read (within the budget) or answered
 * 503 with a Retry-After and OpenAI's error object (an OpenAI route), never anything else; an honest call is answered within
 * {@link #ANSWER_WITHIN} (200, or the same 503 if the budget is full) and health stays UP; the bytes held never pass
 * the budget; the refused bodies were never decided (nothing charged: no decision counted but the honest calls');
 * once the attackers hang up every byte is given back (the gauge reads 0) and an honest call is a 200.
 */
final class HeldBodiesCase {

	/** The JVM option the jar runs with: small, so that the attack is many times the budget. */
	static final String HEAP = "-Xmx128m";

	static final int CONNECTIONS = 48;

	/** Under the default max-body-bytes (4 MB): each body is one the route would read whole. */
	static final int BYTES_EACH = 4 * 1024 * 1024 - 256 * 1024;

	static final Duration ANSWER_WITHIN = Duration.ofSeconds(2);

	/** How long the attackers have to send their bodies (or be refused). */
	private static final Duration SENDING = Duration.ofSeconds(40);

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private HeldBodiesCase() {
	}

	/** The route's arguments: generous limits (nobody is refused by them), clients by X-API-Key, defaults else. */
	static Map<String, Object> routeArgs() {
		Map<String, Object> args = new java.util.LinkedHashMap<>();
		args.put("llm", "openai");
		args.put("limits[0].limit", 10_000_000);
		args.put("limits[0].window", "1d");
		args.put("limits[0].unit", "tokens");
		args.put("limits[1].limit", 10_000);
		args.put("limits[1].window", "1d");
		return args;
	}

	/** Runs the attack on route {@code route} of {@code gateway}, then the checks above. */
	static void run(GatewayJar gateway, String route, String server) throws Exception {
		String path = "/" + route + "/v1/chat/completions";
		assertThat(honestCall(gateway, path, "honest-before").statusCode()).isEqualTo(200);
		long decisionsBefore = gateway.redisDecisions() + gateway.failModeAnswers();
		List<Attacker> attackers = new ArrayList<>();
		try {
			CountDownLatch sent = new CountDownLatch(CONNECTIONS);
			for (int i = 0; i < CONNECTIONS; i++) {
				attackers.add(Attacker.start(gateway.port(), path, "attacker-" + i, sent));
			}
			boolean allSent = sent.await(SENDING.toSeconds(), TimeUnit.SECONDS);
			// what was sent has reached the gateway (or been refused)
			GatewayJar.sleep(1000);
			Map<String, Integer> statuses = statuses(attackers);
			System.out.println("[held bodies, " + server + "] all sent or refused: " + allSent + "; attackers' answers "
					+ statuses);
			long started = System.nanoTime();
			HttpResponse<String> honest = honestCall(gateway, path, "honest-during");
			Duration took = Duration.ofNanos(System.nanoTime() - started);
			GatewayJar.Probe health = gateway.get("/actuator/health", ANSWER_WITHIN);
			System.out.println("[held bodies, " + server + "] honest call while held: " + honest.statusCode() + " in "
					+ took.toMillis() + " ms " + honest.body() + "; health " + health);
			assertThat(health.status()).as("health while held: " + health).isEqualTo(200);
			assertThat(health.body()).contains("\"UP\"");
			assertThat(took).as("the honest call while bodies are held").isLessThan(ANSWER_WITHIN);
			assertThat(honest.statusCode()).as(honest.body()).isIn(200, 503);
			if (honest.statusCode() == 503) {
				assertBudgetRefusal(honest.headers().firstValue("Retry-After").orElse(null), honest.body());
			}
			assertThat(statuses.keySet()).as("attackers are read within the budget or refused 503, nothing else")
				.isSubsetOf("held", "503");
			assertThat(statuses.get("503")).as("attackers refused for the budget").isNotNull();
			for (Attacker attacker : attackers) {
				if (attacker.status() == 503) {
					assertBudgetRefusal(attacker.header("retry-after"), attacker.body());
				}
			}
			long held = buffered(gateway);
			long max = bufferedMax(gateway);
			assertThat(held).as("bytes buffered while held").isBetween(1L, max);
			// refused bodies were never decided: no quota used for them
			long decisions = gateway.redisDecisions() + gateway.failModeAnswers() - decisionsBefore;
			assertThat(decisions).as("decisions while held: the honest call's only").isLessThanOrEqualTo(1);
		}
		finally {
			attackers.forEach(Attacker::close);
		}
		// every byte given back once the clients are gone
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (buffered(gateway) > 0 && System.nanoTime() < deadline) {
			GatewayJar.sleep(100);
		}
		assertThat(buffered(gateway)).as("bytes buffered after the attackers hung up").isZero();
		HttpResponse<String> after = honestCall(gateway, path, "honest-after");
		assertThat(after.statusCode()).as(after.body()).isEqualTo(200);
	}

	private static void assertBudgetRefusal(String retryAfter, String body) {
		assertThat(retryAfter).as("Retry-After of a budget refusal").isEqualTo("1");
		// an OpenAI route: OpenAI's error object, which the SDKs read (issue 45), naming the budget
		assertThat(body).startsWith("{\"error\":{\"message\":").contains("\"type\":\"server_error\"")
			.contains("max-buffered-bytes");
	}

	private static HttpResponse<String> honestCall(GatewayJar gateway, String path, String key) throws Exception {
		String json = "{\"model\":\"gpt-fake\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":50}";
		try {
			return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
				.timeout(ANSWER_WITHIN.plusSeconds(3))
				.header("X-API-Key", key)
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(json))
				.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new AssertionError("honest call to " + gateway + " not answered: " + ex, ex);
		}
	}

	private static Map<String, Integer> statuses(List<Attacker> attackers) {
		Map<String, Integer> statuses = new TreeMap<>();
		for (Attacker attacker : attackers) {
			int status = attacker.status();
			statuses.merge((status == 0) ? (attacker.failed() ? "reset" : "held") : Integer.toString(status), 1,
					Integer::sum);
		}
		return statuses;
	}

	/** {@code gateway.ratelimit.llm.buffered} on the prometheus endpoint: the bytes buffered now. */
	static long buffered(GatewayJar gateway) {
		return (long) gauge(gateway, "gateway_ratelimit_llm_buffered_bytes ");
	}

	static long bufferedMax(GatewayJar gateway) {
		return (long) gauge(gateway, "gateway_ratelimit_llm_buffered_max_bytes ");
	}

	private static double gauge(GatewayJar gateway, String prefix) {
		GatewayJar.Probe metrics = gateway.get("/actuator/prometheus", Duration.ofSeconds(5));
		for (String line : metrics.body().split("\n")) {
			if (line.startsWith(prefix)) {
				return Double.parseDouble(line.substring(prefix.length()).trim());
			}
		}
		throw new AssertionError("no " + prefix.trim() + " on " + gateway + ": " + metrics);
	}

	/** One connection sending a body that never ends, and what the gateway answered it (0: nothing yet). */
	private static final class Attacker {

		private final Socket socket;

		private final AtomicInteger status = new AtomicInteger();

		private final StringBuilder answer = new StringBuilder();

		private final Map<String, String> headers = new ConcurrentHashMap<>();

		private volatile boolean failed;

		private Attacker(Socket socket) {
			this.socket = socket;
		}

		static Attacker start(int port, String path, String key, CountDownLatch sent) throws IOException {
			Socket socket = new Socket();
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			Attacker attacker = new Attacker(socket);
			Thread writer = new Thread(() -> attacker.send(path, key, sent), "attacker-writer-" + key);
			writer.setDaemon(true);
			writer.start();
			Thread reader = new Thread(attacker::read, "attacker-reader-" + key);
			reader.setDaemon(true);
			reader.start();
			return attacker;
		}

		private void send(String path, String key, CountDownLatch sent) {
			try {
				OutputStream out = this.socket.getOutputStream();
				out.write(("POST " + path + " HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key
						+ "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
				chunk(out, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"".getBytes(StandardCharsets.US_ASCII));
				byte[] filler = new byte[64 * 1024];
				java.util.Arrays.fill(filler, (byte) 'a');
				for (int written = 0; written < BYTES_EACH && this.status.get() == 0; written += filler.length) {
					chunk(out, filler);
				}
				// and never the last chunk
			}
			catch (IOException ex) {
				// refused and closed by the gateway
			}
			finally {
				sent.countDown();
			}
		}

		private static void chunk(OutputStream out, byte[] bytes) throws IOException {
			out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
			out.write(bytes);
			out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
		}

		private void read() {
			try {
				InputStream in = this.socket.getInputStream();
				byte[] buffer = new byte[8192];
				int n;
				while ((n = in.read(buffer)) > 0) {
					synchronized (this.answer) {
						this.answer.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
						parse();
					}
				}
			}
			catch (IOException ex) {
				this.failed = this.status.get() == 0;
			}
		}

		private void parse() {
			String text = this.answer.toString();
			int end = text.indexOf("\r\n\r\n");
			if (this.status.get() == 0 && text.startsWith("HTTP/1.1 ") && end > 0) {
				for (String line : text.substring(0, end).split("\r\n")) {
					int colon = line.indexOf(':');
					if (colon > 0) {
						this.headers.put(line.substring(0, colon).trim().toLowerCase(), line.substring(colon + 1).trim());
					}
				}
				this.status.set(Integer.parseInt(text.substring(9, 12)));
			}
		}

		int status() {
			return this.status.get();
		}

		boolean failed() {
			return this.failed;
		}

		String header(String name) {
			return this.headers.get(name);
		}

		String body() {
			synchronized (this.answer) {
				String text = this.answer.toString();
				int end = text.indexOf("\r\n\r\n");
				return (end > 0) ? text.substring(end + 4) : "";
			}
		}

		void close() {
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// closing
			}
		}

	}

}

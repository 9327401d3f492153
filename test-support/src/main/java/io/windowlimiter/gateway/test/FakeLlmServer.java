package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An LLM upstream for tests and the demo, on a free loopback port (the JDK's HTTP server, nothing else):
 * OpenAI's {@code /v1/chat/completions} and {@code /v1/responses}, Anthropic's {@code /v1/messages}
 * (matched by the end of the path, so a route may keep a prefix), each as JSON or, when the request says
 * {@code "stream": true}, as the SSE stream the provider sends, shaped as its API reference shows. Chat
 * completions streams carry their usage only when the request asked ({@code stream_options.include_usage}),
 * as OpenAI's do. The request body is read as the providers' JSON decoders read it (JavaScript's, Python's,
 * Go's): escapes in keys decoded, the last of duplicate keys kept.
 * <p>
 * The test chooses the {@link Reply} (usage figures, delay between events, missing usage, an error status
 * before any token, a stream cut by the upstream), for every request or, through {@code X-Fake-Llm-*}
 * request headers, for one ({@link #HEADER_USAGE} and the others): jar tests and {@code curl} reach it
 * through the gateway. Every request is recorded ({@link #received()}), to assert what the gateway sent.
 */
public final class FakeLlmServer implements AutoCloseable {

	/**
	 * {@code input,output} tokens to report, e.g. {@code 120,30}; then optionally cache reads and cache writes
	 * ({@code 1000,50,600,0}): Anthropic's {@code cache_read_input_tokens} and {@code cache_creation_input_tokens},
	 * OpenAI's {@code cached_tokens} (a part of its input, as OpenAI counts it).
	 */
	public static final String HEADER_USAGE = "X-Fake-Llm-Usage";

	/** Milliseconds between two SSE events. */
	public static final String HEADER_DELAY_MS = "X-Fake-Llm-Delay-Ms";

	/** An error status to answer at once, before any token. */
	public static final String HEADER_STATUS = "X-Fake-Llm-Status";

	/** {@code true}: report no usage at all. */
	public static final String HEADER_NO_USAGE = "X-Fake-Llm-No-Usage";

	/** Number of text deltas in a stream. */
	public static final String HEADER_DELTAS = "X-Fake-Llm-Deltas";

	/**
	 * A chat request whose estimate is exactly {@code tokens}: half its body's bytes plus its max_tokens (the
	 * tests' one way to reserve a known amount).
	 */
	public static String chat(int tokens, boolean stream) {
		String head = "{\"model\":\"gpt-fake\",\"stream\":" + stream
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":";
		for (int max = 1; max < tokens; max++) {
			String body = head + max + "}";
			if ((body.length() + 1) / 2 + max == tokens) {
				return body;
			}
		}
		throw new IllegalArgumentException("no body estimates " + tokens);
	}

	/** Cut the stream (the connection ends early) after this many events. */
	public static final String HEADER_CUT_AFTER = "X-Fake-Llm-Cut-After";

	/**
	 * Write the stream in pieces of this many bytes, each flushed and 2 ms apart, so that the gateway reads
	 * events (lines, UTF-8 characters) cut across its buffers.
	 */
	public static final String HEADER_WRITE_BYTES = "X-Fake-Llm-Write-Bytes";


	private final HttpServer server;

	private final ExecutorService executor;

	private final List<Received> received = new CopyOnWriteArrayList<>();

	private final AtomicInteger ids = new AtomicInteger();

	private volatile Reply reply = Reply.DEFAULT;

	private FakeLlmServer(HttpServer server, ExecutorService executor) {
		this.server = server;
		this.executor = executor;
	}

	/** Started on a free port of 127.0.0.1. */
	public static FakeLlmServer start() {
		return start(0);
	}

	/** Started on the given port of 127.0.0.1 (0: a free one). */
	public static FakeLlmServer start(int port) {
		try {
			HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
			// a thread per exchange: slow streams must not hold up the others
			ExecutorService executor = Executors.newCachedThreadPool((task) -> {
				Thread thread = new Thread(task, "fake-llm");
				thread.setDaemon(true);
				return thread;
			});
			FakeLlmServer fake = new FakeLlmServer(server, executor);
			server.createContext("/", fake::handle);
			server.setExecutor(executor);
			server.start();
			return fake;
		}
		catch (IOException ex) {
			throw new IllegalStateException("could not start the fake LLM server", ex);
		}
	}

	/**
	 * Runs the fake on its own for a demo or a benchmark, until killed:
	 * {@code java -cp <test-support jar> io.windowlimiter.gateway.test.FakeLlmServer [port]}.
	 */
	public static void main(String[] args) throws InterruptedException {
		FakeLlmServer fake = start(args.length > 0 ? Integer.parseInt(args[0]) : 0);
		System.out.println("fake LLM upstream at " + fake.baseUrl()
				+ " (/v1/chat/completions, /v1/responses, /v1/messages)");
		Thread.currentThread().join();
	}

	public int port() {
		return this.server.getAddress().getPort();
	}

	/** {@code http://127.0.0.1:<port>}. */
	public String baseUrl() {
		return "http://127.0.0.1:" + port();
	}

	/** The reply to every request from now on (headers may still change one request's). */
	public FakeLlmServer reply(Reply reply) {
		this.reply = reply;
		return this;
	}

	/** Every request received, oldest first. */
	public List<Received> received() {
		return List.copyOf(this.received);
	}

	/** The last request received; fails when there was none. */
	public Received lastReceived() {
		if (this.received.isEmpty()) {
			throw new IllegalStateException("the fake LLM server received no request");
		}
		return this.received.get(this.received.size() - 1);
	}

	public void clearReceived() {
		this.received.clear();
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	private void handle(HttpExchange exchange) throws IOException {
		if (serve(exchange)) {
			// not closed: the server drops a connection whose handler throws, before the stream's last chunk
			throw new IOException("stream cut on purpose");
		}
		exchange.close();
	}

	/** Answers; true when the stream was cut and must end without its last chunk. */
	private boolean serve(HttpExchange exchange) throws IOException {
		byte[] body;
		try (InputStream in = exchange.getRequestBody()) {
			body = in.readAllBytes();
		}
		Map<String, String> headers = new LinkedHashMap<>();
		exchange.getRequestHeaders()
			.forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
		String path = exchange.getRequestURI().getPath();
		Received request = new Received(exchange.getRequestMethod(), path, Map.copyOf(headers), body);
		this.received.add(request);
		Reply reply = this.reply.overriddenBy(headers);
		Api api = Api.of(path);
		if (api == null) {
			send(exchange, 404, "application/json", "{\"error\":{\"message\":\"no such endpoint: " + path + "\"}}");
			return false;
		}
		if (reply.status >= 400) {
			send(exchange, reply.status, "application/json", api.error(reply.status));
			return false;
		}
		Asked asked = Asked.of(body);
		Call call = new Call(api, reply, asked.model(), asked.stream(), asked.includeUsage(), this.ids.incrementAndGet());
		if (!call.stream) {
			send(exchange, 200, "application/json", call.json());
			return false;
		}
		String pieces = headers.get(HEADER_WRITE_BYTES.toLowerCase(Locale.ROOT));
		if (pieces != null) {
			return streamInPieces(exchange, call.events(), Integer.parseInt(pieces.trim()));
		}
		return stream(exchange, reply, call.events());
	}

	private static boolean streamInPieces(HttpExchange exchange, List<String> events, int size) throws IOException {
		byte[] bytes = String.join("", events).getBytes(StandardCharsets.UTF_8);
		OutputStream out = startStream(exchange);
		for (int from = 0; from < bytes.length; from += size) {
			out.write(bytes, from, Math.min(size, bytes.length - from));
			out.flush();
			sleep(Duration.ofMillis(2));
		}
		return false;
	}

	private static boolean stream(HttpExchange exchange, Reply reply, List<String> events) throws IOException {
		OutputStream out = startStream(exchange);
		int sent = 0;
		for (String event : events) {
			if (sent == reply.cutAfterEvents) {
				return true;
			}
			if (sent > 0 && !reply.eventDelay.isZero()) {
				sleep(reply.eventDelay);
			}
			out.write(event.getBytes(StandardCharsets.UTF_8));
			out.flush();
			sent++;
		}
		return false;
	}

	/** A 200 event stream, chunked: its body to write events to. */
	private static OutputStream startStream(HttpExchange exchange) throws IOException {
		exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
		exchange.getResponseHeaders().set("Cache-Control", "no-cache");
		exchange.sendResponseHeaders(200, 0);
		return exchange.getResponseBody();
	}

	private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().set("Content-Type", contentType);
		exchange.sendResponseHeaders(status, bytes.length);
		exchange.getResponseBody().write(bytes);
	}

	private static void sleep(Duration delay) throws IOException {
		try {
			Thread.sleep(delay.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("interrupted", ex);
		}
	}

	/**
	 * What a request body asks for, read as an upstream reads it: a JSON decoder that decodes escapes and keeps
	 * the last of duplicate keys (Jackson's default, as JavaScript's, Python's and Go's). A body that is not a
	 * JSON object asks for nothing.
	 */
	private record Asked(boolean stream, boolean includeUsage, String model) {

		static Asked of(byte[] body) {
			JsonNode root;
			try {
				root = JsonMapper.shared().readTree(body);
			}
			catch (JacksonException notJson) {
				root = null;
			}
			if (root == null || !root.isObject()) {
				return new Asked(false, false, "fake-model");
			}
			JsonNode model = root.path("model");
			return new Asked(root.path("stream").isBoolean() && root.path("stream").booleanValue(),
					root.path("stream_options").path("include_usage").isBoolean()
							&& root.path("stream_options").path("include_usage").booleanValue(),
					model.isString() && !model.stringValue().isEmpty() ? model.stringValue() : "fake-model");
		}

	}

	/** A request as received. */
	public record Received(String method, String path, Map<String, String> headers, byte[] body) {

		public String bodyText() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

		/** The body asked for the stream's usage ({@code "stream_options": {"include_usage": true}}), as decoded. */
		public boolean asksIncludeUsage() {
			return Asked.of(this.body).includeUsage();
		}

		/** The body asked for a stream ({@code "stream": true}), as decoded. */
		public boolean asksStream() {
			return Asked.of(this.body).stream();
		}

		/** A header's value (names are lower-cased), or null. */
		public String header(String name) {
			return this.headers.get(name.toLowerCase(Locale.ROOT));
		}

	}

	/**
	 * What the fake answers; immutable, each method returns a changed copy. Default: usage 10 input and 20
	 * output tokens, 5 text deltas, no delay, status 200.
	 */
	public static final class Reply {

		public static final Reply DEFAULT = new Reply(10, 20, 0, 0, 5, Duration.ZERO, true, 200, -1);

		final long inputTokens;

		final long outputTokens;

		final long cacheCreationTokens;

		final long cacheReadTokens;

		final int deltas;

		final Duration eventDelay;

		final boolean usage;

		final int status;

		final int cutAfterEvents;

		private Reply(long inputTokens, long outputTokens, long cacheCreationTokens, long cacheReadTokens, int deltas,
				Duration eventDelay, boolean usage, int status, int cutAfterEvents) {
			this.inputTokens = inputTokens;
			this.outputTokens = outputTokens;
			this.cacheCreationTokens = cacheCreationTokens;
			this.cacheReadTokens = cacheReadTokens;
			this.deltas = deltas;
			this.eventDelay = eventDelay;
			this.usage = usage;
			this.status = status;
			this.cutAfterEvents = cutAfterEvents;
		}

		public static Reply usage(long inputTokens, long outputTokens) {
			return DEFAULT.withUsage(inputTokens, outputTokens);
		}

		/** Report these figures. */
		public Reply withUsage(long inputTokens, long outputTokens) {
			return new Reply(inputTokens, outputTokens, this.cacheCreationTokens, this.cacheReadTokens, this.deltas,
					this.eventDelay, true, this.status, this.cutAfterEvents);
		}

		/**
		 * The prompt cache's figures: Anthropic's, apart from its input; OpenAI's {@code cached_tokens} is the reads,
		 * a part of its input.
		 */
		public Reply withCache(long creationTokens, long readTokens) {
			return new Reply(this.inputTokens, this.outputTokens, creationTokens, readTokens, this.deltas,
					this.eventDelay, this.usage, this.status, this.cutAfterEvents);
		}

		/** Number of text deltas of a stream. */
		public Reply withDeltas(int deltas) {
			return new Reply(this.inputTokens, this.outputTokens, this.cacheCreationTokens, this.cacheReadTokens,
					deltas, this.eventDelay, this.usage, this.status, this.cutAfterEvents);
		}

		/** A slow stream: this long between two events. */
		public Reply withEventDelay(Duration delay) {
			return new Reply(this.inputTokens, this.outputTokens, this.cacheCreationTokens, this.cacheReadTokens,
					this.deltas, delay, this.usage, this.status, this.cutAfterEvents);
		}

		/** No usage anywhere in the answer (as some OpenAI-compatible servers do). */
		public Reply withoutUsage() {
			return new Reply(this.inputTokens, this.outputTokens, this.cacheCreationTokens, this.cacheReadTokens,
					this.deltas, this.eventDelay, false, this.status, this.cutAfterEvents);
		}

		/** An error answer with this status, before any token, in the provider's error shape. */
		public static Reply error(int status) {
			return new Reply(0, 0, 0, 0, 0, Duration.ZERO, false, status, -1);
		}

		/** The upstream ends the connection after this many events of a stream. */
		public Reply cutAfterEvents(int events) {
			return new Reply(this.inputTokens, this.outputTokens, this.cacheCreationTokens, this.cacheReadTokens,
					this.deltas, this.eventDelay, this.usage, this.status, events);
		}

		Reply overriddenBy(Map<String, String> headers) {
			Reply reply = this;
			String usage = headers.get(HEADER_USAGE.toLowerCase(Locale.ROOT));
			if (usage != null) {
				String[] figures = usage.split(",");
				reply = reply.withUsage(Long.parseLong(figures[0].trim()), Long.parseLong(figures[1].trim()));
				if (figures.length > 2) {
					reply = reply.withCache((figures.length > 3) ? Long.parseLong(figures[3].trim()) : 0,
							Long.parseLong(figures[2].trim()));
				}
			}
			String delay = headers.get(HEADER_DELAY_MS.toLowerCase(Locale.ROOT));
			if (delay != null) {
				reply = reply.withEventDelay(Duration.ofMillis(Long.parseLong(delay.trim())));
			}
			String deltas = headers.get(HEADER_DELTAS.toLowerCase(Locale.ROOT));
			if (deltas != null) {
				reply = reply.withDeltas(Integer.parseInt(deltas.trim()));
			}
			if ("true".equalsIgnoreCase(headers.get(HEADER_NO_USAGE.toLowerCase(Locale.ROOT)))) {
				reply = reply.withoutUsage();
			}
			String cut = headers.get(HEADER_CUT_AFTER.toLowerCase(Locale.ROOT));
			if (cut != null) {
				reply = reply.cutAfterEvents(Integer.parseInt(cut.trim()));
			}
			String status = headers.get(HEADER_STATUS.toLowerCase(Locale.ROOT));
			if (status != null) {
				reply = error(Integer.parseInt(status.trim()));
			}
			return reply;
		}

	}

	private enum Api {

		CHAT, RESPONSES, MESSAGES;

		static Api of(String path) {
			if (path.endsWith("/chat/completions")) {
				return CHAT;
			}
			if (path.endsWith("/responses")) {
				return RESPONSES;
			}
			if (path.endsWith("/messages")) {
				return MESSAGES;
			}
			return null;
		}

		String error(int status) {
			if (this == MESSAGES) {
				String type = status == 529 ? "overloaded_error" : status == 429 ? "rate_limit_error" : "api_error";
				return "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":\"fake error " + status
						+ "\"}}";
			}
			return "{\"error\":{\"message\":\"fake error " + status + "\",\"type\":\"server_error\",\"param\":null,"
					+ "\"code\":\"" + (status == 429 ? "rate_limit_exceeded" : "server_error") + "\"}}";
		}

	}

	/** One answer, rendered in its API's shapes. */
	private record Call(Api api, Reply reply, String model, boolean stream, boolean includeUsage, int id) {

		String text() {
			StringBuilder text = new StringBuilder();
			for (int i = 0; i < this.reply.deltas; i++) {
				text.append(delta(i));
			}
			return text.toString();
		}

		static String delta(int i) {
			return i == 0 ? "Héllo" : " wörld-" + i;
		}

		String json() {
			return switch (this.api) {
				case CHAT -> "{\"id\":\"chatcmpl-fake" + this.id + "\",\"object\":\"chat.completion\","
						+ "\"created\":1741569952,\"model\":\"" + this.model + "\",\"choices\":[{\"index\":0,"
						+ "\"message\":{\"role\":\"assistant\",\"content\":\"" + text() + "\",\"refusal\":null,"
						+ "\"annotations\":[]},\"logprobs\":null,\"finish_reason\":\"stop\"}]"
						+ (this.reply.usage ? ",\"usage\":" + chatUsage() : "") + ",\"service_tier\":\"default\"}";
				case RESPONSES -> response("completed", true);
				case MESSAGES -> "{\"id\":\"msg_fake" + this.id + "\",\"type\":\"message\",\"role\":\"assistant\","
						+ "\"model\":\"" + this.model + "\",\"content\":[{\"type\":\"text\",\"text\":\"" + text()
						+ "\"}],\"stop_reason\":\"end_turn\",\"stop_sequence\":null"
						+ (this.reply.usage ? ",\"usage\":" + anthropicUsage(this.reply.outputTokens) : "") + "}";
			};
		}

		List<String> events() {
			return switch (this.api) {
				case CHAT -> chatEvents();
				case RESPONSES -> responsesEvents();
				case MESSAGES -> messagesEvents();
			};
		}

		private String chatUsage() {
			Reply r = this.reply;
			return "{\"prompt_tokens\":" + r.inputTokens + ",\"completion_tokens\":" + r.outputTokens
					+ ",\"total_tokens\":" + (r.inputTokens + r.outputTokens) + ",\"prompt_tokens_details\":"
					+ "{\"cached_tokens\":" + r.cacheReadTokens + ",\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,"
					+ "\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}";
		}

		private String chatChunk(String delta, String finishReason) {
			return "data: {\"id\":\"chatcmpl-fake" + this.id + "\",\"object\":\"chat.completion.chunk\","
					+ "\"created\":1694268190,\"model\":\"" + this.model + "\",\"system_fingerprint\":\"fp_fake\","
					+ "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":"
					+ finishReason + "}]" + (this.includeUsage ? ",\"usage\":null" : "") + "}\n\n";
		}

		private List<String> chatEvents() {
			List<String> events = new ArrayList<>();
			events.add(chatChunk("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}", "null"));
			for (int i = 0; i < this.reply.deltas; i++) {
				events.add(chatChunk("{\"content\":\"" + delta(i) + "\"}", "null"));
			}
			events.add(chatChunk("{}", "\"stop\""));
			if (this.includeUsage && this.reply.usage) {
				events.add("data: {\"id\":\"chatcmpl-fake" + this.id + "\",\"object\":\"chat.completion.chunk\","
						+ "\"created\":1694268190,\"model\":\"" + this.model + "\",\"system_fingerprint\":\"fp_fake\","
						+ "\"choices\":[],\"usage\":" + chatUsage() + "}\n\n");
			}
			events.add("data: [DONE]\n\n");
			return events;
		}

		private String response(String status, boolean withOutput) {
			Reply r = this.reply;
			String output = withOutput ? "[{\"id\":\"msg_fake" + this.id + "\",\"type\":\"message\",\"status\":\"completed\","
					+ "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"" + text()
					+ "\",\"annotations\":[]}]}]" : "[]";
			String usage = withOutput && r.usage ? "{\"input_tokens\":" + r.inputTokens
					+ ",\"input_tokens_details\":{\"cached_tokens\":" + r.cacheReadTokens + "},\"output_tokens\":" + r.outputTokens
					+ ",\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":"
					+ (r.inputTokens + r.outputTokens) + "}" : "null";
			return "{\"id\":\"resp_fake" + this.id + "\",\"object\":\"response\",\"created_at\":1741290958,"
					+ "\"status\":\"" + status + "\",\"error\":null,\"incomplete_details\":null,\"model\":\""
					+ this.model + "\",\"output\":" + output + ",\"parallel_tool_calls\":true,\"store\":true,"
					+ "\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\","
					+ "\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":" + usage + ",\"metadata\":{}}";
		}

		private static String event(String type, String data) {
			return "event: " + type + "\ndata: " + data + "\n\n";
		}

		private List<String> responsesEvents() {
			List<String> events = new ArrayList<>();
			int seq = 0;
			events.add(event("response.created", "{\"type\":\"response.created\",\"sequence_number\":" + seq++
					+ ",\"response\":" + response("in_progress", false) + "}"));
			events.add(event("response.in_progress", "{\"type\":\"response.in_progress\",\"sequence_number\":"
					+ seq++ + ",\"response\":" + response("in_progress", false) + "}"));
			for (int i = 0; i < this.reply.deltas; i++) {
				events.add(event("response.output_text.delta", "{\"type\":\"response.output_text.delta\","
						+ "\"sequence_number\":" + seq++ + ",\"item_id\":\"msg_fake" + this.id + "\",\"output_index\":0,"
						+ "\"content_index\":0,\"delta\":\"" + delta(i) + "\",\"logprobs\":[]}"));
			}
			events.add(event("response.output_text.done", "{\"type\":\"response.output_text.done\","
					+ "\"sequence_number\":" + seq++ + ",\"item_id\":\"msg_fake" + this.id + "\",\"output_index\":0,"
					+ "\"content_index\":0,\"text\":\"" + text() + "\",\"logprobs\":[]}"));
			events.add(event("response.completed", "{\"type\":\"response.completed\",\"sequence_number\":" + seq
					+ ",\"response\":" + response("completed", true) + "}"));
			return events;
		}

		private String anthropicUsage(long outputTokens) {
			Reply r = this.reply;
			return "{\"input_tokens\":" + r.inputTokens + ",\"cache_creation_input_tokens\":" + r.cacheCreationTokens
					+ ",\"cache_read_input_tokens\":" + r.cacheReadTokens + ",\"output_tokens\":" + outputTokens
					+ ",\"service_tier\":\"standard\"}";
		}

		private List<String> messagesEvents() {
			List<String> events = new ArrayList<>();
			boolean usage = this.reply.usage;
			events.add(event("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_fake" + this.id
					+ "\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"" + this.model
					+ "\",\"stop_reason\":null,\"stop_sequence\":null"
					+ (usage ? ",\"usage\":" + anthropicUsage(Math.min(1, this.reply.outputTokens)) : "") + "}}"));
			events.add(event("content_block_start",
					"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"));
			events.add(event("ping", "{\"type\": \"ping\"}"));
			for (int i = 0; i < this.reply.deltas; i++) {
				events.add(event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,"
						+ "\"delta\":{\"type\":\"text_delta\",\"text\":\"" + delta(i) + "\"}}"));
			}
			events.add(event("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"));
			events.add(event("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
					+ "\"stop_sequence\":null}" + (usage ? ",\"usage\":{\"output_tokens\":" + this.reply.outputTokens + "}"
							: "") + "}"));
			events.add(event("message_stop", "{\"type\":\"message_stop\"}"));
			return events;
		}

	}

}

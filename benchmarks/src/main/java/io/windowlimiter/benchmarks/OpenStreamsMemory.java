package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's memory per open stream: N slow streams ({@link SseStreams}' {@code /slow/<n>}) opened at once, and
 * once every one has received all but its slow tail, the gateway's live heap (a full GC's class histogram, from
 * {@code jcmd GC.class_histogram}) is compared with the same before they opened. A meter whose state grew with
 * the bytes it read would show more per stream for long streams than for short ones.
 */
final class OpenStreamsMemory {

	/**
	 * @param heapBytesPerStream growth of the live heap with the streams open, over the streams
	 * @param ourBytesPerStream the same, counting only instances of {@code io.windowlimiter.*} classes (shallow:
	 * arrays they own are counted under the array classes)
	 * @param bytesReadPerStream what each stream had received when the heap was read
	 */
	record Result(String route, int events, int streams, double heapBytesPerStream, double ourBytesPerStream,
			long bytesReadPerStream) {
	}

	/** Live bytes of a heap histogram, all and of this project's classes. */
	record Histogram(long totalBytes, long ourBytes) {
	}

	private final GatewayProcess gateway;

	private final LocalRedis redis;

	private final int streams;

	private final String body;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	OpenStreamsMemory(GatewayProcess gateway, LocalRedis redis, int streams, String body) {
		this.gateway = gateway;
		this.redis = redis;
		this.streams = streams;
		this.body = body;
	}

	/** Opens the streams on {@code route}, reads the heap while they are open, and checks each ends whole. */
	Result measure(String route, int events, int expectedLength) throws IOException, InterruptedException {
		this.redis.flushAll();
		Histogram before = histogram(this.gateway.pid());
		List<Counter> counters = new ArrayList<>();
		List<CompletableFuture<HttpResponse<Long>>> answers = new ArrayList<>();
		for (int i = 0; i < this.streams; i++) {
			Counter counter = new Counter();
			counters.add(counter);
			HttpRequest request = HttpRequest.newBuilder(URI.create(this.gateway.url("/" + route + "/slow/" + events)))
				.header("X-API-Key", String.format("slow-%05d", i))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(this.body))
				.timeout(Duration.ofMinutes(3))
				.build();
			answers.add(this.client.sendAsync(request, info -> HttpResponse.BodySubscribers.fromSubscriber(counter,
					Counter::total)));
		}
		// nginx's rate counts the response's headers, and the meter may hold back one unfinished event: allow for both
		long prefix = Math.max(0, expectedLength - SseStreams.TAIL_BYTES - 800);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (counters.stream().anyMatch(c -> c.total() < prefix)) {
			if (System.nanoTime() > deadline || answers.stream().anyMatch(CompletableFuture::isDone)) {
				String ended = answers.stream().filter(CompletableFuture::isDone).findFirst()
					.map(answer -> answer.handle((response, error) -> (error != null) ? error.toString()
							: response.statusCode() + ", " + response.body() + " bytes").join())
					.orElse("none");
				throw new IllegalStateException(route + " " + events + " events: streams did not all reach " + prefix
						+ " bytes while open; least " + counters.stream().mapToLong(Counter::total).min().orElse(0)
						+ "; first ended: " + ended);
			}
			Thread.sleep(100);
		}
		long read = counters.stream().mapToLong(Counter::total).min().orElse(0);
		Histogram during = histogram(this.gateway.pid());
		if (answers.stream().anyMatch(CompletableFuture::isDone)) {
			throw new IllegalStateException(route + " " + events + " events: a stream ended before the heap was read");
		}
		for (CompletableFuture<HttpResponse<Long>> answer : answers) {
			HttpResponse<Long> response = answer.join();
			if (response.statusCode() != 200 || response.body() != expectedLength) {
				throw new IllegalStateException(route + " " + events + " events: a slow stream answered "
						+ response.statusCode() + " with " + response.body() + " bytes, expected " + expectedLength);
			}
		}
		return new Result(route, events, this.streams,
				(during.totalBytes() - before.totalBytes()) / (double) this.streams,
				(during.ourBytes() - before.ourBytes()) / (double) this.streams, read);
	}

	/** The live heap after a full GC: {@code jcmd <pid> GC.class_histogram} (it collects first). */
	static Histogram histogram(long pid) throws IOException, InterruptedException {
		Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
		Process process = new ProcessBuilder(Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd", Long.toString(pid),
				"GC.class_histogram")
			.redirectErrorStream(true)
			.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		process.waitFor();
		long total = -1;
		long ours = 0;
		for (String line : output.split("\n")) {
			String[] fields = line.trim().split("\\s+");
			if (fields.length >= 3 && fields[0].equals("Total")) {
				total = Long.parseLong(fields[2]);
			}
			else if (fields.length >= 4 && fields[0].endsWith(":") && fields[3].startsWith("io.windowlimiter.")) {
				ours += Long.parseLong(fields[2]);
			}
		}
		if (total < 0) {
			throw new IllegalStateException("jcmd GC.class_histogram gave no total:\n" + output);
		}
		return new Histogram(total, ours);
	}

	/** Counts a body's bytes as they arrive, keeping none. */
	static final class Counter implements Flow.Subscriber<List<ByteBuffer>> {

		private final AtomicLong total = new AtomicLong();

		long total() {
			return this.total.get();
		}

		@Override
		public void onSubscribe(Flow.Subscription subscription) {
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		public void onNext(List<ByteBuffer> buffers) {
			for (ByteBuffer buffer : buffers) {
				this.total.addAndGet(buffer.remaining());
			}
		}

		@Override
		public void onError(Throwable error) {
		}

		@Override
		public void onComplete() {
		}

	}

}

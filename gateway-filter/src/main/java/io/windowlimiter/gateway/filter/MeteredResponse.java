package io.windowlimiter.gateway.filter;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.metering.UsageMeter;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Fuseable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * The response of an LLM call as it passes to the client: each buffer is read by the {@link UsageMeter} and
 * forwarded at once (never gathered), untouched unless the meter strips OpenAI's usage-only chunk the gateway
 * asked for; then the body gets shorter and its {@code Content-Length} is dropped.
 */
final class MeteredResponse extends ServerHttpResponseDecorator {

	private final UsageMeter meter;

	MeteredResponse(ServerHttpResponse delegate, UsageMeter meter) {
		super(delegate);
		this.meter = meter;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		dropLengthWhenStripping();
		return super.writeWith(Flux.from(body).map(this::pass).concatWith(Mono.fromSupplier(this::rest)));
	}

	/**
	 * A stream, as the gateway writes one: each buffer in a publisher of its own, flushed after it. A group
	 * of one buffer ({@code Flux.just}, the gateway's) is metered as it comes, without an operator per
	 * buffer; the held rest, if any, is one more group (none when nothing is held: no flush for nothing).
	 */
	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		dropLengthWhenStripping();
		return super.writeAndFlushWith(Flux.from(body).map(this::passGroup)
			.concatWith(Mono.fromSupplier(this::rest).map(Mono::just)));
	}

	private Publisher<? extends DataBuffer> passGroup(Publisher<? extends DataBuffer> group) {
		if (group instanceof Fuseable.ScalarCallable<?> one) {
			Object buffer;
			try {
				buffer = one.call();
			}
			catch (Exception ex) {
				// an error group: it signals the error when the writer subscribes
				return group;
			}
			if (buffer instanceof DataBuffer data) {
				return Mono.just(pass(data));
			}
		}
		return Flux.from(group).map(this::pass);
	}

	private void dropLengthWhenStripping() {
		HttpHeaders headers = getDelegate().getHeaders();
		if (this.meter.stripsUsageChunk() && headers.containsHeader(HttpHeaders.CONTENT_LENGTH)) {
			headers.remove(HttpHeaders.CONTENT_LENGTH);
			// the gateway removed the chunked encoding for the upstream's length: without either, Reactor Netty
			// ends the body by closing the client's connection (HTTP/2 drops this header itself)
			headers.set(HttpHeaders.TRANSFER_ENCODING, "chunked");
		}
	}

	/** What the meter still holds when the body completes (a last event without its blank line), or null. */
	private @Nullable DataBuffer rest() {
		ByteBuffer rest = this.meter.finish();
		return rest.hasRemaining() ? bufferFactory().wrap(rest) : null;
	}

	/**
	 * One buffer read by the meter: the same buffer, its readable bytes narrowed when the meter withholds its
	 * tail (an event the next buffer ends), joined after the bytes held from earlier buffers; a copy only when
	 * the meter drops bytes from its middle (the usage-only chunk, once a stream).
	 */
	private DataBuffer pass(DataBuffer buffer) {
		try (DataBuffer.ByteBufferIterator slices = buffer.readableByteBuffers()) {
			if (!slices.hasNext()) {
				return buffer;
			}
			ByteBuffer first = slices.next();
			if (!slices.hasNext()) {
				UsageMeter.Passed passed = new UsageMeter.Passed();
				this.meter.pass(first, passed);
				DataBuffer through = through(buffer, first, passed);
				byte[] held = passed.held();
				if (held == null) {
					return (through != null) ? through : bufferFactory().allocateBuffer(0);
				}
				// into the server's (direct) allocator: a composite with a heap part would be copied whole into a
				// direct buffer when written, the through bytes included
				DataBuffer heldBuffer = bufferFactory().allocateBuffer(held.length).write(held);
				return (through == null) ? heldBuffer : bufferFactory().join(List.of(heldBuffer, through));
			}
			// a composite buffer (not what Reactor Netty's client hands): what each slice lets through, copied
			List<ByteBuffer> out = new ArrayList<>(2);
			out.add(this.meter.pass(first));
			while (slices.hasNext()) {
				out.add(this.meter.pass(slices.next()));
			}
			int length = 0;
			for (ByteBuffer passed : out) {
				length += passed.remaining();
			}
			DataBuffer copy = bufferFactory().allocateBuffer(Math.max(length, 1));
			for (ByteBuffer passed : out) {
				copy.write(passed.duplicate());
			}
			DataBufferUtils.release(buffer);
			return copy;
		}
	}

	/** The slice's bytes the meter let through, as a buffer: {@code buffer} narrowed, or a copy; null when none. */
	private @Nullable DataBuffer through(DataBuffer buffer, ByteBuffer slice, UsageMeter.Passed passed) {
		int ranges = passed.ranges();
		if (ranges == 0) {
			DataBufferUtils.release(buffer);
			return null;
		}
		if (ranges == 1) {
			int start = buffer.readPosition();
			buffer.writePosition(start + passed.to(0));
			buffer.readPosition(start + passed.from(0));
			return buffer;
		}
		DataBuffer copy = bufferFactory().allocateBuffer(passed.rangeBytes());
		for (int k = 0; k < ranges; k++) {
			copy.write(passed.range(slice, k));
		}
		DataBufferUtils.release(buffer);
		return copy;
	}

}

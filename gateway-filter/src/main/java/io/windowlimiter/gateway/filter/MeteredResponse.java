package io.windowlimiter.gateway.filter;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.metering.UsageMeter;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
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
		return super.writeWith(Flux.from(body).map(this::pass).concatWith(rest()));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		dropLengthWhenStripping();
		return super.writeAndFlushWith(
				Flux.from(body).map(inner -> Flux.from(inner).map(this::pass)).concatWith(Mono.fromSupplier(this::rest)));
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

	/** What the meter still holds when the body completes (a last event without its blank line). */
	private Flux<DataBuffer> rest() {
		return Flux.defer(() -> {
			ByteBuffer rest = this.meter.finish();
			return rest.hasRemaining() ? Flux.just(bufferFactory().wrap(rest)) : Flux.empty();
		});
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
				Passed passed = new Passed();
				this.meter.pass(first, passed);
				DataBuffer through = passed.through(buffer, first);
				if (passed.held == null) {
					return (through != null) ? through : bufferFactory().allocateBuffer(0);
				}
				return (through == null) ? passed.held : bufferFactory().join(List.of(passed.held, through));
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

	/** What the meter let through of one slice: held bytes (copied) and ranges of the slice. */
	private final class Passed implements UsageMeter.Output {

		@Nullable DataBuffer held;

		int ranges;

		int from;

		int to;

		/** Ranges after the first, when the meter dropped bytes between them. */
		@Nullable List<int[]> more;

		@Override
		public void held(byte[] bytes, int offset, int length) {
			DataBuffer copy = bufferFactory().allocateBuffer(length);
			copy.write(bytes, offset, length);
			if (this.held != null) {
				this.held = bufferFactory().join(List.of(this.held, copy));
			}
			else {
				this.held = copy;
			}
		}

		@Override
		public void slice(int from, int to) {
			if (this.ranges++ == 0) {
				this.from = from;
				this.to = to;
			}
			else {
				if (this.more == null) {
					this.more = new ArrayList<>(2);
				}
				this.more.add(new int[] { from, to });
			}
		}

		/** The slice's bytes let through, as a buffer: {@code buffer} narrowed, or a copy; null when none. */
		@Nullable DataBuffer through(DataBuffer buffer, ByteBuffer slice) {
			if (this.ranges == 0) {
				DataBufferUtils.release(buffer);
				return null;
			}
			if (this.more == null) {
				int start = buffer.readPosition();
				buffer.writePosition(start + this.to);
				buffer.readPosition(start + this.from);
				return buffer;
			}
			int length = this.to - this.from;
			for (int[] range : this.more) {
				length += range[1] - range[0];
			}
			DataBuffer copy = bufferFactory().allocateBuffer(length);
			copy.write(range(slice, this.from, this.to));
			for (int[] range : this.more) {
				copy.write(range(slice, range[0], range[1]));
			}
			DataBufferUtils.release(buffer);
			return copy;
		}

		private ByteBuffer range(ByteBuffer slice, int from, int to) {
			return slice.duplicate().limit(slice.position() + to).position(slice.position() + from);
		}

	}

}

package io.windowlimiter.gateway.filter;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.metering.UsageMeter;
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

	/** One buffer read by the meter: the same buffer unless the meter withheld or dropped bytes of it. */
	private DataBuffer pass(DataBuffer buffer) {
		List<ByteBuffer> out = new ArrayList<>(1);
		boolean same = true;
		try (DataBuffer.ByteBufferIterator slices = buffer.readableByteBuffers()) {
			while (slices.hasNext()) {
				ByteBuffer slice = slices.next();
				ByteBuffer passed = this.meter.pass(slice);
				same &= passed == slice;
				out.add(passed);
			}
			if (same) {
				return buffer;
			}
			int length = 0;
			for (ByteBuffer passed : out) {
				length += passed.remaining();
			}
			DataBuffer copy = bufferFactory().allocateBuffer(Math.max(length, 1));
			for (ByteBuffer passed : out) {
				copy.write(passed.duplicate());
			}
			return copy;
		}
		finally {
			if (!same) {
				DataBufferUtils.release(buffer);
			}
		}
	}

}

package io.windowlimiter.gateway.filter;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.BufferedBodies;
import io.windowlimiter.core.LlmCharge;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.ProviderAnswers;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.Reservation;
import io.windowlimiter.core.Slots;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.TokenEstimate;
import io.windowlimiter.metering.UsageMeter;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * The LLM calls of one {@code WindowRateLimit} filter with {@code llm}: answers a client known refused before its
 * body is read; else reads the request body once (bounded by {@code max-body-bytes}, and its bytes counted against
 * the instance's {@link BufferedBodies} until the decision: 503 at once past it) and has the core reserve its token estimate in the
 * token limits of the client's policy and the request's cost in the others, in one decision;
 * sends the body upstream (asking for a stream's usage when the client did not), meters the response as it
 * passes, and settles the token limits to the usage read when the exchange ends: completed, failed or
 * cancelled by the client.
 */
final class LlmCalls {

	private static final byte[] TOO_LARGE = new byte[0];

	private static final byte[] OVER_BUDGET = new byte[0];

	private final RateLimiterCore core;

	private final String policyId;

	private final LlmSettings settings;

	LlmCalls(RateLimiterCore core, String policyId, LlmSettings settings) {
		this.core = core;
		this.policyId = policyId;
		this.settings = settings;
	}

	/**
	 * @param answer given the admission: the answer to send instead of going on (a refusal), or null to go on
	 * (it has set the admission's headers)
	 * @param refused called when the request is refused before admission (its body too large, compressed, or one
	 * the upstream could read otherwise than the gateway meters it)
	 * @param refusedLater whether another filter of the route refused the request after this one admitted it:
	 * then nothing is charged, request limits included
	 */
	Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain, String key, Mono<String> plan,
			Function<Admission, @Nullable Mono<Void>> answer, Runnable refused, BooleanSupplier refusedLater) {
		int max = this.settings.maxBodyBytes();
		HttpHeaders headers = exchange.getRequest().getHeaders();
		String encoded = LlmSettings.unsupportedEncodingProblem(headers.get(HttpHeaders.CONTENT_ENCODING));
		if (encoded != null) {
			// a compressed body the meter cannot read: refused before it is read, nothing charged
			refused.run();
			return unsupportedEncoding(exchange.getResponse(), encoded);
		}
		long declared = headers.getContentLength();
		if (declared > max) {
			refused.run();
			return tooLarge(exchange.getResponse(), max);
		}
		// asked before the body is read and again with its estimate: the plan resolver runs once
		Mono<String> onePlan = plan.cache();
		// a client this instance knows is refused is answered before its body is read: nothing read for nothing
		return this.core.knownRefusal(this.policyId, key, declared, TokenEstimate.DEFAULT_BYTES_PER_TOKEN, onePlan)
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap(known -> {
				Mono<Void> instead = known.map(answer).orElse(null);
				return (instead != null) ? instead : readAndAdmit(exchange, chain, key, onePlan, answer, refused,
						refusedLater);
			});
	}

	private Mono<Void> readAndAdmit(ServerWebExchange exchange, GatewayFilterChain chain, String key,
			Mono<String> plan, Function<Admission, @Nullable Mono<Void>> answer, Runnable refused,
			BooleanSupplier refusedLater) {
		int max = this.settings.maxBodyBytes();
		BufferedBodies bodies = this.core.bufferedBodies();
		long declared = exchange.getRequest().getHeaders().getContentLength();
		if (declared > 0 && !bodies.fits(declared)) {
			refused.run();
			return busy(exchange.getResponse(), bodies);
		}
		// the body's bytes count against the instance's budget as they are buffered, until its decision
		BufferedBodies.Lease lease = bodies.lease();
		Flux<DataBuffer> counted = exchange.getRequest().getBody().map(buffer -> {
			if (!lease.take(buffer.readableByteCount())) {
				DataBufferUtils.release(buffer);
				throw OverBudget.INSTANCE;
			}
			return buffer;
		});
		return DataBufferUtils.join(counted, max)
			.map(joined -> {
				byte[] bytes = new byte[joined.readableByteCount()];
				joined.read(bytes);
				DataBufferUtils.release(joined);
				return bytes;
			})
			.defaultIfEmpty(new byte[0])
			.onErrorResume(DataBufferLimitException.class, tooMuch -> Mono.just(TOO_LARGE))
			.onErrorResume(OverBudget.class, busy -> Mono.just(OVER_BUDGET))
			.flatMap(body -> {
				if (body == OVER_BUDGET || body == TOO_LARGE) {
					lease.close();
					refused.run();
					return (body == OVER_BUDGET) ? busy(exchange.getResponse(), bodies)
							: tooLarge(exchange.getResponse(), max);
				}
				LlmRequest request = LlmRequest.read(this.settings.api(), body);
				LlmRequest.Refusal refusal = request.refusal();
				if (refusal == null) {
					// a budget in money cannot count a model without a price
					refusal = this.core.unpriced(this.policyId, request.model());
				}
				if (refusal != null) {
					// the upstream could read this body otherwise than the gateway meters it
					lease.close();
					refused.run();
					return badRequest(exchange.getResponse(), refusal);
				}
				return admit(exchange, chain, key, plan, request, body, answer, refusedLater, lease);
			})
			// every other end gives the bytes back too: the client gone, an error, the call's end
			.doFinally(signal -> lease.close());
	}

	private Mono<Void> admit(ServerWebExchange exchange, GatewayFilterChain chain, String key, Mono<String> plan,
			LlmRequest request, byte[] body, Function<Admission, @Nullable Mono<Void>> answer,
			BooleanSupplier refusedLater, BufferedBodies.Lease lease) {
		// uncapped: the core caps it at the smallest token limit of the client's own policy
		TokenEstimate estimate = TokenEstimate.of(request, Long.MAX_VALUE);
		return this.core.admitCall(this.policyId, key, estimate, request.model(), plan).flatMap(admission -> {
			// decided: the body is the call's now (bounded by the route's limits), no longer waiting on the budget
			lease.close();
			Mono<Void> instead = answer.apply(admission);
			if (instead != null) {
				return instead;
			}
			Reservation reservation = admission.reservation();
			// the provider's rate-limit headers, whichever filter of the route is closest to refusing
			ProviderAnswers.headers(this.settings.api(), admission).forEach(exchange.getResponse().getHeaders()::set);
			Mono<Void> call = call(exchange, chain, request, reserved(estimate, reservation), body, reservation,
					refusedLater);
			Slots slots = admission.slots();
			return (slots != null) ? WindowRateLimitFilter.releasedAtTheEnd(call, slots) : call;
		});
	}

	/** The estimate as the call reserved it (capped by the client's policy); as made when nothing was reserved. */
	static TokenEstimate reserved(TokenEstimate estimate, @Nullable Reservation reservation) {
		return (reservation != null && reservation.tokens() > 0)
				? new TokenEstimate(estimate.promptTokens(), estimate.outputTokens(), reservation.tokens()) : estimate;
	}

	/** Sends the call upstream and settles its tokens when the exchange ends, whichever way. */
	private Mono<Void> call(ServerWebExchange exchange, GatewayFilterChain chain, LlmRequest request,
			TokenEstimate estimate, byte[] body, @Nullable Reservation reservation, BooleanSupplier refusedLater) {
		byte[] upstream = request.needsIncludeUsage() ? request.withIncludeUsage(body) : body;
		ServerHttpRequest sent = exchange.getRequest().mutate().headers(headers -> {
			// a compressed body cannot be read as it passes
			headers.set(HttpHeaders.ACCEPT_ENCODING, "identity");
			headers.remove(HttpHeaders.TRANSFER_ENCODING);
			headers.setContentLength(upstream.length);
		}).build();
		ServerHttpRequest withBody = new ServerHttpRequestDecorator(sent) {
			@Override
			public Flux<DataBuffer> getBody() {
				return Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(upstream)));
			}
		};
		UsageMeter meter = UsageMeter.of(request, estimate);
		MeteredResponse response = new MeteredResponse(exchange.getResponse(), meter);
		AtomicBoolean ended = new AtomicBoolean();
		return chain.filter(exchange.mutate().request(withBody).response(response).build())
			.doFinally(signal -> {
				if (ended.compareAndSet(false, true)) {
					settle(reservation, meter, response.getStatusCode(), signal, refusedLater.getAsBoolean());
				}
			});
	}

	/**
	 * Settles the token limits: to the usage read when the response completed; at least the reservation when
	 * the client went away (never less: hanging up must not make a call cheap); nothing for an upstream error
	 * before any token. The request limits stay as reserved.
	 */
	private void settle(@Nullable Reservation reservation, UsageMeter meter, @Nullable HttpStatusCode status,
			SignalType signal, boolean refusedLater) {
		// an error before any status (the upstream unreachable) is the gateway's 5xx
		int code = (status != null) ? status.value() : (signal == SignalType.ON_ERROR) ? 502 : 200;
		LlmCharge charge = LlmSettings.charge(meter, code, signal == SignalType.CANCEL, reservation);
		boolean missing = signal == SignalType.ON_COMPLETE && LlmSettings.usageMissing(meter, code);
		this.core.metrics().llmCall(this.policyId, Reservation.modelTag(reservation), meter.reservedTokens(),
				charge.tokens(), meter.usage().outcome().name().toLowerCase(), missing);
		if (reservation == null) {
			return;
		}
		// a later filter of the route refused it: given back whole, as every WindowRateLimit filter does
		Mono<RateLimiterCore.Settled> settle = refusedLater
				? this.core.settle(reservation, new long[reservation.costs().length])
				: this.core.settleCall(reservation, charge);
		// not on the response's path: the client has its answer; a settle Redis cannot take is counted dropped
		settle.subscribe(settled -> { }, error -> { });
	}

	/** A 400 answer naming the field of the request body the gateway will not guess at. */
	private Mono<Void> badRequest(ServerHttpResponse response, LlmRequest.Refusal refusal) {
		return error(response, 400, LlmSettings.badRequestProblem(refusal));
	}

	/**
	 * A refusal the core decided (a limit, a block, the fail-mode), its status and headers set: the provider's
	 * rate-limit headers and error object, as the SDKs read them.
	 */
	Mono<Void> refuse(ServerHttpResponse response, Admission admission, int status) {
		ProviderAnswers.headers(this.settings.api(), admission).forEach(response.getHeaders()::set);
		return json(response, ProviderAnswers.body(this.settings.api(), admission, status));
	}

	/** An error of this route, in the provider's shape: the problem body's message as the provider's error object. */
	Mono<Void> error(ServerHttpResponse response, int status, String problem) {
		response.setStatusCode(HttpStatusCode.valueOf(status));
		return json(response, ProviderAnswers.error(this.settings.api(), status, problem));
	}

	private static Mono<Void> json(ServerHttpResponse response, String json) {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		response.getHeaders().setContentLength(body.length);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/**
	 * A 503 problem answer with Retry-After: the body would take the instance's budget of buffered bodies past its
	 * bound (the instance is busy, not the client over its quota).
	 */
	private Mono<Void> busy(ServerHttpResponse response, BufferedBodies bodies) {
		this.core.metrics().bufferFull(this.policyId);
		response.getHeaders().set(HttpHeaders.RETRY_AFTER, BufferedBodies.RETRY_AFTER_SECONDS);
		return error(response, 503, bodies.refusalProblem());
	}

	/** The 415 answer to a body in a content coding, naming the one coding taken. */
	private Mono<Void> unsupportedEncoding(ServerHttpResponse response, String problem) {
		response.getHeaders().set(HttpHeaders.ACCEPT_ENCODING, "identity");
		return error(response, LlmSettings.UNSUPPORTED_ENCODING_STATUS, problem);
	}

	/** The body's next bytes would take the budget past its bound; thrown where they arrive, without a trace. */
	private static final class OverBudget extends RuntimeException {

		static final OverBudget INSTANCE = new OverBudget();

		private OverBudget() {
			super("over max-buffered-bytes", null, false, false);
		}

	}

	/** A 413 answer naming the limit. */
	private Mono<Void> tooLarge(ServerHttpResponse response, int max) {
		return error(response, 413, LlmSettings.tooLargeProblem(max));
	}

}

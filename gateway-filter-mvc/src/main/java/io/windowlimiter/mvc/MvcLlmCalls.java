package io.windowlimiter.mvc;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.BufferedBodies;
import io.windowlimiter.core.LlmCharge;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.ProviderAnswers;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.Reservation;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.TokenEstimate;
import io.windowlimiter.metering.UsageMeter;
import io.windowlimiter.mvc.MeteredServerResponse.Ending;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The LLM calls of {@code WindowRateLimit} filters with {@code llm} on Server MVC, as the WebFlux filter makes
 * them: answers a client known refused before its body is read; else reads the request body once (at most
 * {@code max-body-bytes}, else 413; a body in a content coding, 415 before it is read; its bytes counted against the
 * instance's {@link BufferedBodies} until the decision, 503 with Retry-After at once past it; a body the upstream
 * could read otherwise than the gateway meters it, 400 naming the field) and has the core reserve its token
 * estimate in the token limits of the client's policy and
 * the route's cost in the others, in one decision, all or nothing; sends the body upstream
 * (asking for a stream's usage when the client did not); meters the response as it is written
 * ({@link MeteredServerResponse}); and settles the token limits to the usage read once the writing ended,
 * waiting for that settle as long as for any settle on Server MVC. The request limits stay as reserved.
 */
final class MvcLlmCalls {

	private final RateLimiterCore core;

	private final MvcRateLimiter limiter;

	MvcLlmCalls(RateLimiterCore core, MvcRateLimiter limiter) {
		this.core = core;
		this.limiter = limiter;
	}

	/**
	 * The call's first attempt. Once admitted, its other attempts (a {@code Retry} filter listed before this one)
	 * are recorded in {@code attempts} for {@code filter}: each sends the body read here, none is decided again.
	 */
	ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next, String routeId, String key,
			LlmSettings settings, Mono<String> plan, int refusalStatus, MvcAttempts attempts, Object filter)
			throws Exception {
		String encoded = LlmSettings.unsupportedEncodingProblem(request.headers().header(HttpHeaders.CONTENT_ENCODING));
		if (encoded != null) {
			// a compressed body the meter cannot read: refused before it is read, nothing charged
			return error(settings, ServerResponse.status(LlmSettings.UNSUPPORTED_ENCODING_STATUS)
				.header(HttpHeaders.ACCEPT_ENCODING, "identity"), LlmSettings.UNSUPPORTED_ENCODING_STATUS, encoded);
		}
		long declared = request.servletRequest().getContentLengthLong();
		if (declared > settings.maxBodyBytes()) {
			return tooLarge(settings);
		}
		// asked before the body is read and again with its estimate: the plan resolver runs once
		Mono<String> onePlan = plan.cache();
		// a client this instance knows is refused is answered before its body is read: nothing read for nothing
		Admission known = this.limiter.await(routeId,
				this.core.knownRefusal(routeId, key, declared, TokenEstimate.DEFAULT_BYTES_PER_TOKEN, onePlan));
		if (known != null && !known.passes()) {
			return refusal(settings, known, refusalStatus);
		}
		BufferedBodies bodies = this.core.bufferedBodies();
		if (declared > 0 && !bodies.fits(declared)) {
			return busy(routeId, settings, bodies);
		}
		byte[] body;
		LlmRequest call;
		TokenEstimate estimate;
		Admission admission;
		// the body's bytes count against the instance's budget as they are read, until its decision, whatever ends it
		try (BufferedBodies.Lease lease = bodies.lease()) {
			body = LlmRequestBody.read(request, settings.maxBodyBytes(), lease);
			if (body == LlmRequestBody.TOO_LARGE) {
				return tooLarge(settings);
			}
			if (body == LlmRequestBody.OVER_BUDGET) {
				return busy(routeId, settings, bodies);
			}
			call = LlmRequest.read(settings.api(), body);
			LlmRequest.Refusal refusal = call.refusal();
			if (refusal == null) {
				// a budget in money cannot count a model without a price
				refusal = this.core.unpriced(routeId, call.model());
			}
			if (refusal != null) {
				// the upstream could read this body otherwise than the gateway meters it
				return error(settings, ServerResponse.badRequest(), 400, LlmSettings.badRequestProblem(refusal));
			}
			// uncapped: the core caps it at the smallest token limit of the client's own policy
			estimate = TokenEstimate.of(call, Long.MAX_VALUE);
			// within the request's Redis budget, shared with the route's other filters
			admission = this.limiter.await(routeId,
					this.limiter.budget(request).bound(this.core.admitCall(routeId, key, estimate, call.model(), onePlan)));
		}
		if (!admission.passes()) {
			return refusal(settings, admission, refusalStatus);
		}
		// the rate-limit headers, and the provider's of the call's request and token limits
		Map<String, String> headers = new LinkedHashMap<>(admission.headers());
		headers.putAll(ProviderAnswers.headers(settings.api(), admission));
		Call admitted = new Call(routeId, settings, call, reserved(estimate, admission.reservation()),
				admission.reservation(), headers, call.needsIncludeUsage() ? call.withIncludeUsage(body) : body);
		attempts.unsettled(admitted);
		attempts.first(filter, admitted);
		return admitted.again(request, next);
	}

	/**
	 * An admitted call through every attempt a {@code Retry} filter makes of it: each sends the same body and is
	 * metered as it is written; only the response the client gets is written, and its writing settles the call,
	 * once. A call no written response settled (every attempt failed, the proxy failed) is settled by its last
	 * attempt when the request's handling ends: an error before any token refunded.
	 */
	private final class Call implements MvcAttempts.Attempt, MvcAttempts.Unsettled {

		private final String routeId;

		private final LlmSettings settings;

		private final LlmRequest call;

		private final TokenEstimate estimate;

		private final @Nullable Reservation reservation;

		private final Map<String, String> headers;

		private final byte[] body;

		private final AtomicBoolean settled = new AtomicBoolean();

		/** The last attempt's meter and status, for a call no written response settled. */
		private @Nullable UsageMeter lastMeter;

		private int lastStatus = HttpStatus.INTERNAL_SERVER_ERROR.value();

		Call(String routeId, LlmSettings settings, LlmRequest call, TokenEstimate estimate,
				@Nullable Reservation reservation, Map<String, String> headers, byte[] body) {
			this.routeId = routeId;
			this.settings = settings;
			this.call = call;
			this.estimate = estimate;
			this.reservation = reservation;
			this.headers = headers;
			this.body = body;
		}

		@Override
		public ServerResponse again(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception {
			UsageMeter meter = UsageMeter.of(this.call, this.estimate);
			this.lastMeter = meter;
			ServerRequest sent = LlmRequestBody.sending(request, this.body);
			ServerResponse response;
			try {
				response = next.handle(sent);
			}
			catch (Exception ex) {
				// no response: the upstream unreachable or the proxy failed before any token; refunded when final
				this.lastStatus = MvcRateLimiter.failedStatus(ex);
				throw ex;
			}
			this.lastStatus = response.statusCode().value();
			MvcRateLimiter.addHeaders(response, this.headers);
			return new MeteredServerResponse(response, sent.servletRequest(), meter,
					(status, ending) -> settleOnce(meter, status, ending));
		}

		@Override
		public void settleByLastAttempt() {
			UsageMeter meter = this.lastMeter;
			if (meter != null) {
				// never written: nothing of it read, so an error status is refunded, any other charged its reservation
				settleOnce(meter, this.lastStatus, Ending.FAILED);
			}
		}

		private void settleOnce(UsageMeter meter, int status, Ending ending) {
			if (this.settled.compareAndSet(false, true)) {
				settle(this.routeId, this.settings, this.reservation, meter, status, ending);
			}
		}

	}

	/**
	 * Settles the token limits: to the usage read when the body was written whole; at least the reservation and
	 * what was seen when the client went away (hanging up must not make a call cheap); nothing for an upstream
	 * error before any token. Counted in {@code gateway.ratelimit.llm.*} as on WebFlux.
	 */
	private void settle(String routeId, LlmSettings settings, @Nullable Reservation reservation, UsageMeter meter,
			int status, Ending ending) {
		LlmCharge charge = LlmSettings.charge(meter, status, ending == Ending.CLIENT_GONE, reservation);
		boolean missing = ending == Ending.COMPLETED && LlmSettings.usageMissing(meter, status);
		this.core.metrics().llmCall(routeId, Reservation.modelTag(reservation), meter.reservedTokens(), charge.tokens(),
				meter.usage().outcome().name().toLowerCase(Locale.ROOT), missing);
		if (reservation != null) {
			this.limiter.awaitSettle(routeId, this.core.settleCall(reservation, charge));
		}
	}

	/** The estimate as the call reserved it (capped by the client's policy); as made when nothing was reserved. */
	private static TokenEstimate reserved(TokenEstimate estimate, @Nullable Reservation reservation) {
		return (reservation != null && reservation.tokens() > 0)
				? new TokenEstimate(estimate.promptTokens(), estimate.outputTokens(), reservation.tokens()) : estimate;
	}

	/**
	 * A 503 problem answer with Retry-After, before any quota is used: the body would take the instance's budget
	 * of buffered bodies past its bound (the instance is busy, not the client over its quota).
	 */
	private ServerResponse busy(String routeId, LlmSettings settings, BufferedBodies bodies) {
		this.core.metrics().bufferFull(routeId);
		return error(settings, ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE)
			.header(HttpHeaders.RETRY_AFTER, BufferedBodies.RETRY_AFTER_SECONDS), 503, bodies.refusalProblem());
	}

	/** A 413 answer naming the limit, before any quota is used. */
	private static ServerResponse tooLarge(LlmSettings settings) {
		return error(settings, ServerResponse.status(HttpStatus.PAYLOAD_TOO_LARGE), 413,
				LlmSettings.tooLargeProblem(settings.maxBodyBytes()));
	}

	/**
	 * A refusal the core decided (a limit, a block, the fail-mode) in the provider's shape, as the WebFlux filter
	 * answers it: the route's {@code status-code} or the core's own status, the core's headers, the provider's
	 * rate-limit headers and error object.
	 */
	private static ServerResponse refusal(LlmSettings settings, Admission admission, int statusCode) {
		int status = (admission.status() != 0) ? admission.status() : statusCode;
		return json(ServerResponse.status(status).headers(headers -> {
			admission.headers().forEach(headers::set);
			ProviderAnswers.headers(settings.api(), admission).forEach(headers::set);
		}), ProviderAnswers.body(settings.api(), admission, status));
	}

	/** An error of an LLM route, in its provider's shape: the problem body's message as the provider's error object. */
	static ServerResponse error(LlmSettings settings, ServerResponse.BodyBuilder answer, int status, String problem) {
		return json(answer, ProviderAnswers.error(settings.api(), status, problem));
	}

	private static ServerResponse json(ServerResponse.BodyBuilder answer, String json) {
		return answer.contentType(MediaType.APPLICATION_JSON).body(json);
	}

}

package io.windowlimiter.gateway.filter;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.windowlimiter.core.QuotaProblem;
import io.windowlimiter.core.Admission;
import io.windowlimiter.core.CostAboveLimitException;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.Reservation;
import io.windowlimiter.core.ResponseCost;
import io.windowlimiter.core.Slots;
import io.windowlimiter.core.failure.RedisBudget;
import io.windowlimiter.core.key.ConflictingCredentialsException;
import io.windowlimiter.core.key.MissingKey;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.CostResolver;
import io.windowlimiter.gateway.ProblemDetailsFilter;
import io.windowlimiter.gateway.plan.PlanResolver;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * One {@code WindowRateLimit} filter on one route: resolves the client's key and the request's cost, has the
 * core decide its policy, and answers a refusal as the {@code RequestRateLimiter} filter does (status,
 * headers, a problem-details body when that is on). Every answer carries the headers of the limit closest
 * to refusing among the route's filters; a request one filter refuses is given back what the filters
 * before it reserved. With {@code count-statuses} or {@code cost-from-response-header}, the reservation is
 * settled once the response starts.
 *
 * <p>Several filters on a route decide one after the other, each in one call, and give back on refusal:
 * one script for all would be exact without the give-back, but their keys (per API key, per IP) hash to
 * different Redis Cluster slots, which one script cannot touch. Between a reservation and its give-back
 * (a Redis round trip) the reserved units are held: a concurrent request of the same client may be refused
 * by them. Every Redis call they make before the response is committed (each filter's decision, a settle that
 * would delay the commit) shares one budget, {@code redis-timeout} in all: an answer waits no longer for Redis
 * with two filters and a settle than with one decision.
 */
final class WindowRateLimitFilter implements GatewayFilter {

	private final RateLimiterCore core;

	private final FilterSettings settings;

	private final KeyResolver keyResolver;

	private final @Nullable CostResolver costResolver;

	private final @Nullable PlanResolver planResolver;

	private final boolean problemDetails;

	private final @Nullable LlmCalls llm;

	WindowRateLimitFilter(RateLimiterCore core, FilterSettings settings, KeyResolver keyResolver,
			@Nullable CostResolver costResolver, @Nullable PlanResolver planResolver, boolean problemDetails,
			@Nullable LlmSettings llm) {
		this.core = core;
		this.settings = settings;
		this.keyResolver = keyResolver;
		this.costResolver = costResolver;
		this.planResolver = planResolver;
		this.problemDetails = problemDetails;
		this.llm = (llm != null) ? new LlmCalls(core, settings.policyId(), llm) : null;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ExchangeLimits limits = ExchangeLimits.of(exchange);
		switch (limits.pass(this.settings.policyId(), this)) {
			case TAKEN -> {
				return Mono.error(new IllegalStateException("Two WindowRateLimit filters of this request are both known as '"
						+ this.settings.policyId() + "' and would count it twice: give each filter of a route an id of "
						+ "its own (id: ip, id: api-key ...)"));
			}
			case AGAIN -> {
				return again(exchange, chain, limits);
			}
			case FIRST -> {
			}
		}
		return this.keyResolver.resolve(exchange).defaultIfEmpty(RedisKeys.EMPTY_KEY)
			// answered here, before any limit is asked; completes empty, so nothing below runs
			.onErrorResume(ConflictingCredentialsException.class, conflict -> {
				limits.refuse();
				return problem(exchange.getResponse(), 400, conflict.problem()).then(Mono.<String>empty());
			})
			.flatMap(key -> {
				if (RedisKeys.EMPTY_KEY.equals(key) && this.settings.denyEmptyKey()) {
					limits.refuse();
					int status = this.settings.emptyKeyStatus();
					MissingKey.log(this.settings.policyId(), status, this.keyResolver);
					return problem(exchange.getResponse(), status, MissingKey.problem(status, reason(status), this.keyResolver));
				}
				RedisBudget budget = limits.budget(this.core);
				if (this.llm != null) {
					// its decision, and those of the route's later filters, share the answer's budget
					return budget.bound(this.llm.filter(exchange, chain, key, plan(exchange), admission -> {
						if (!admission.passes()) {
							return refuse(exchange, limits, admission);
						}
						if (limits.closest(admission.remaining())) {
							admission.headers().forEach(exchange.getResponse().getHeaders()::set);
						}
						return null;
					}, limits::refuse, limits::refused));
				}
				return decide(exchange, key, budget).flatMap(decided -> {
					if (decided.badCost() != null) {
						limits.refuse();
						return badRequest(exchange.getResponse(), decided.badCost());
					}
					Admission admission = decided.admission();
					return admission.passes() ? pass(exchange, chain, limits, admission) : refuse(exchange, limits, admission);
				});
			});
	}

	/**
	 * The request once more, for another attempt of a {@code Retry} filter listed before this one: a gateway retry is
	 * not a new client request. It was counted on the first pass, whose settle waits for the response, which is
	 * committed once, with the final attempt's status; so it goes on to the next attempt as it is. A request refused
	 * (here or by another filter) is answered the same again, never sent downstream. An LLM filter runs before every
	 * route filter: only a filter ordered before it (a global one, say) could run it again, and the call it wrapped
	 * (the body it read, the response it meters) ended with the first attempt.
	 */
	private Mono<Void> again(ServerWebExchange exchange, GatewayFilterChain chain, ExchangeLimits limits) {
		if (limits.refused()) {
			return exchange.getResponse().setComplete();
		}
		if (this.llm != null) {
			return Mono.error(new IllegalStateException("The LLM filter of '" + this.settings.policyId() + "' was run "
					+ "twice for one request, by a filter ordered before it (order -2), such as a global Retry: list Retry "
					+ "among the route's filters, which run after it"));
		}
		return chain.filter(exchange);
	}

	/** The core's admission, or what is wrong with the request's cost. */
	private Mono<Decided> decide(ServerWebExchange exchange, String key, RedisBudget budget) {
		Mono<String> plan = plan(exchange);
		return cost(exchange)
			.flatMap(cost -> budget.bound(this.core.admit(this.settings.policyId(), key, cost, plan))
				.map(admission -> new Decided(admission, null))
				.onErrorResume(CostAboveLimitException.class,
						tooHigh -> Mono.just(new Decided(null, new BadCost(costSource(), "is '" + tooHigh.cost()
								+ "', more than this route allows at once", "a whole number from 1 to " + tooHigh.maxCost())))))
			.onErrorResume(BadCost.class, bad -> Mono.just(new Decided(null, bad)));
	}

	private Mono<String> plan(ServerWebExchange exchange) {
		return (this.planResolver != null) ? Mono.defer(() -> this.planResolver.resolve(exchange)) : Mono.empty();
	}

	/** Where a request's cost came from, for a 400 naming it. */
	private String costSource() {
		return (this.settings.costFromHeader() != null) ? this.settings.costFromHeader() : "the request's cost";
	}

	/** The cost resolver's, else the cost header's, else -1: the filter's {@code cost}. */
	private Mono<Long> cost(ServerWebExchange exchange) {
		Mono<Long> fromHeader = Mono.fromCallable(() -> headerCost(exchange));
		if (this.costResolver == null) {
			return fromHeader;
		}
		return this.costResolver.resolve(exchange).map(cost -> {
			if (cost < 1) {
				throw new IllegalStateException("The cost resolver of WindowRateLimit filter '" + this.settings.policyId()
						+ "' gave a cost of " + cost + "; costs are whole numbers from 1");
			}
			return cost;
		}).switchIfEmpty(fromHeader);
	}

	private long headerCost(ServerWebExchange exchange) {
		String header = this.settings.costFromHeader();
		if (header == null) {
			return -1;
		}
		List<String> values = exchange.getRequest().getHeaders().get(header);
		if (values == null || values.isEmpty()) {
			return -1;
		}
		String allowed = "a whole number from 1, at most what the route's smallest limit allows at once";
		if (values.size() > 1) {
			throw new BadCost(header, "is sent " + values.size() + " times", "one " + header + " header, " + allowed);
		}
		String value = values.get(0).trim();
		// digits only: no sign, no exponent, no spaces; 18 digits always fit a long
		if (value.isEmpty() || value.length() > 18 || !value.chars().allMatch(c -> c >= '0' && c <= '9')
				|| Long.parseLong(value) < 1) {
			throw new BadCost(header, "is '" + printable(value) + "'", allowed);
		}
		return Long.parseLong(value);
	}

	private Mono<Void> pass(ServerWebExchange exchange, GatewayFilterChain chain, ExchangeLimits limits,
			Admission admission) {
		ServerHttpResponse response = exchange.getResponse();
		if (limits.closest(admission.remaining())) {
			admission.headers().forEach(response.getHeaders()::set);
		}
		Reservation reservation = admission.reservation();
		Slots slots = admission.slots();
		if (reservation != null) {
			// settled when the response starts: its status and headers are known, and the client sees it only
			// after the settle (its next request finds the refund made). A client gone before then never gets
			// a response started: it stays charged what was reserved, so hanging up never makes a call free.
			// The response waits for it at most what is left of the answer's Redis budget: a settle that cannot
			// finish by then lands after the response
			response.beforeCommit(() -> limits.budget(this.core).waitAtMost(settle(response, limits, reservation)));
		}
		return (slots != null) ? releasedAtTheEnd(chain.filter(exchange), slots) : chain.filter(exchange);
	}

	/**
	 * The exchange, giving its concurrency slots back when it ends: completed (the response written), failed,
	 * or cancelled (the client gone). Not on the response's path: one Redis call nobody waits for; one Redis
	 * cannot take is dropped, and the slot expires after its window.
	 */
	static Mono<Void> releasedAtTheEnd(Mono<Void> exchange, Slots slots) {
		return exchange.doFinally(signal -> slots.release().subscribe());
	}

	/**
	 * Settles the reservation to what the request cost: nothing when a later filter refused it or its status
	 * does not count, the upstream's cost header when it sent one; else it stays as reserved and nothing is
	 * sent (one Redis call per request on a route without response-dependent settings).
	 */
	private Mono<Void> settle(ServerHttpResponse response, ExchangeLimits limits, Reservation reservation) {
		long actual = actualCost(response, limits, reservation.cost());
		if (actual == reservation.cost()) {
			return Mono.empty();
		}
		return this.core.settle(reservation, actual).onErrorResume(error -> Mono.empty()).then();
	}

	private long actualCost(ServerHttpResponse response, ExchangeLimits limits, long reserved) {
		if (limits.refused()) {
			return 0;
		}
		HttpStatusCode status = response.getStatusCode();
		String header = this.settings.costFromResponseHeader();
		return ResponseCost.actual(this.settings.countStatuses(), (status != null) ? status.value() : 200,
				(header != null) ? response.getHeaders().getFirst(header) : null, reserved);
	}

	private Mono<Void> refuse(ServerWebExchange exchange, ExchangeLimits limits, Admission admission) {
		limits.refuse();
		ServerHttpResponse response = exchange.getResponse();
		// the core's own status when it has one: 403 for a listed or blocked client, a calendar quota's
		// quota-status; else the filter's status-code
		int status = (admission.status() != 0) ? admission.status() : this.settings.statusCode();
		response.setStatusCode(HttpStatusCode.valueOf(status));
		HttpHeaders headers = response.getHeaders();
		admission.headers().forEach(headers::set);
		if (this.llm != null) {
			// an LLM route answers in its provider's shape, whatever problem-details says: the SDKs read that body
			return this.llm.refuse(response, admission, status);
		}
		if (this.problemDetails && admission.forbidden()) {
			headers.set(ProblemDetailsFilter.FORBIDDEN, "true");
		}
		else if (this.problemDetails && !admission.violated().isEmpty()) {
			headers.set(ProblemDetailsFilter.VIOLATED, ProblemDetailsFilter.mark(admission.violated()));
		}
		return response.setComplete();
	}

	/** A 400 problem-details answer naming what is wrong with the request's cost. */
	private static Mono<Void> badRequest(ServerHttpResponse response, BadCost bad) {
		response.setStatusCode(HttpStatusCode.valueOf(400));
		String detail = bad.source + " " + bad.what + "; allowed: " + bad.allowed;
		byte[] body = ("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
				+ QuotaProblem.jsonString(detail) + ",\"header\":" + QuotaProblem.jsonString(bad.source)
				+ "}").getBytes(StandardCharsets.UTF_8);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		response.getHeaders().setContentLength(body.length);
		DataBuffer buffer = response.bufferFactory().wrap(body);
		return response.writeWith(Mono.just(buffer));
	}

	/**
	 * A problem-details answer of {@code status} with the body given; on an LLM route the provider's error object
	 * of the same message instead, as the SDKs read it.
	 */
	private Mono<Void> problem(ServerHttpResponse response, int status, String problem) {
		if (this.llm != null) {
			return this.llm.error(response, status, problem);
		}
		response.setStatusCode(HttpStatusCode.valueOf(status));
		byte[] body = problem.getBytes(StandardCharsets.UTF_8);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		response.getHeaders().setContentLength(body.length);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/** The reason phrase of a status, for a problem's title. */
	private static String reason(int status) {
		HttpStatus known = HttpStatus.resolve(status);
		return (known != null) ? known.getReasonPhrase() : "Error";
	}

	/** A header value as echoed in an answer: at most 64 printable ASCII characters. */
	private static String printable(String value) {
		StringBuilder out = new StringBuilder();
		for (int i = 0; i < value.length() && i < 64; i++) {
			char c = value.charAt(i);
			out.append((c >= 0x20 && c < 0x7f) ? c : '?');
		}
		return (value.length() > 64) ? out + "..." : out.toString();
	}

	/** The core's admission, or what is wrong with the request's cost; one of the two. */
	private record Decided(@Nullable Admission admission, @Nullable BadCost badCost) {
	}

	/** A request's cost that is not a whole number it may use: the client's mistake, a 400. */
	private static final class BadCost extends RuntimeException {

		private final String source;

		private final String what;

		private final String allowed;

		BadCost(String source, String what, String allowed) {
			super(source + " " + what, null, false, false);
			this.source = source;
			this.what = what;
			this.allowed = allowed;
		}

	}

}

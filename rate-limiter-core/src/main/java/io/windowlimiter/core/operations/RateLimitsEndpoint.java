package io.windowlimiter.core.operations;

import java.net.ConnectException;
import java.security.Principal;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.windowlimiter.core.ReadyAnswer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.util.MimeType;

/**
 * The {@code ratelimits} actuator endpoint (web only: its paths and 404s are HTTP's). Like every
 * actuator endpoint but health it is reachable only once exposed
 * ({@code management.endpoints.web.exposure.include}); it reads and resets clients' quotas, so expose it
 * only on a management port or behind Spring Security.
 * <ul>
 * <li>{@code GET /actuator/ratelimits}: every route with limits of this limiter, every scope and plan.</li>
 * <li>{@code GET /actuator/ratelimits/{target}}: one route, with the clients refused most lately; or one
 * scope, with the routes naming it.</li>
 * <li>{@code GET /actuator/ratelimits/{target}/{client}}: the client's remaining quota and reset per
 * limit, read without spending any, and its plan or override.</li>
 * <li>{@code DELETE /actuator/ratelimits/{target}/{client}}: resets the client on every instance, and lifts
 * an operator's block on the target.</li>
 * <li>{@code POST /actuator/ratelimits/{target}/{client}}: puts the client on a plan
 * ({@code {"plan": "pro"}}), gives it a limit of its own ({@code {"limit": 50, "window": "1m"}}), either
 * optionally for a while ({@code "expires": "1h"}), or clears either ({@code {"clear": true}}); blocks the
 * client, 403 until the block ends ({@code {"block": "15m"}}), or exempts it from its limits
 * ({@code {"exempt": true}}, optionally with {@code expires} or {@code "until": "2026-12-24T00:00:00Z"});
 * {@code clear} lifts those too.</li>
 * </ul>
 * {@code {target}} is a route id or a scope name.
 * The client is the rest of the path, so a key holding {@code /} may be written as is; URL-encode what
 * a path cannot hold as is (spaces, non-ASCII, {@code %}, {@code ?}, {@code #}), and a {@code /} that
 * leads, ends or doubles (as {@code %2F}).
 */
@WebEndpoint(id = RateLimitsEndpoint.ID)
public class RateLimitsEndpoint {

	/** The endpoint's id, as in {@code /actuator/ratelimits}. */
	public static final String ID = "ratelimits";

	/** {@code application/problem+json}: the core has no spring-web, whose MediaType names it. */
	private static final MimeType PROBLEM_JSON = new MimeType("application", "problem+json");

	private final RateLimitOperations operations;

	public RateLimitsEndpoint(RateLimitOperations operations) {
		this.operations = operations;
	}

	/** Every route with limits of this limiter, with its limits; every scope, and every plan. */
	@ReadOperation
	public Map<String, Object> routes() {
		Map<String, Object> all = new LinkedHashMap<>();
		all.put("routes", this.operations.routes());
		all.put("scopes", this.operations.scopes());
		all.put("plans", this.operations.plans());
		return all;
	}

	/**
	 * One route's limits and the clients this instance refused most lately, or one scope and its routes;
	 * 404 for an unknown target.
	 */
	@ReadOperation
	public WebEndpointResponse<Object> route(@Selector String target) {
		RateLimitOperations.ScopeDetails scope = this.operations.scope(target);
		if (scope != null) {
			return new WebEndpointResponse<>(scope);
		}
		RateLimitOperations.RouteDetails route = this.operations.route(target);
		return (route != null) ? new WebEndpointResponse<>(route) : unknown(target);
	}

	/** The client's remaining quota and reset per limit, read without spending any. */
	@ReadOperation
	public Mono<WebEndpointResponse<Object>> client(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments) {
		String client = client(segments);
		if (client == null) {
			return ReadyAnswer.of(noClient());
		}
		return this.operations.standing(target, client)
			.map(standing -> new WebEndpointResponse<Object>(standing))
			.defaultIfEmpty(unknown(target))
			.onErrorResume(RateLimitsEndpoint::isRedisUnavailable, ex -> Mono.just(redisUnavailable(ex)))
			.flatMap(ReadyAnswer::of);
	}

	/** Resets the client on the route or scope, on every instance; logged and audited with who asked. */
	@DeleteOperation
	public Mono<WebEndpointResponse<Object>> reset(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments, SecurityContext security) {
		String client = client(segments);
		if (client == null) {
			return ReadyAnswer.of(noClient());
		}
		Principal principal = security.getPrincipal();
		return this.operations.reset(target, client, (principal != null) ? principal.getName() : null)
			.map(reset -> new WebEndpointResponse<Object>(reset))
			.defaultIfEmpty(unknown(target))
			.onErrorResume(RateLimitsEndpoint::isRedisUnavailable, ex -> Mono.just(redisUnavailable(ex)))
			.flatMap(ReadyAnswer::of);
	}

	/**
	 * Puts the client on a plan, gives it a limit of its own, or clears either, on the route or scope; every
	 * instance has it within a second. Logged and audited with who asked. Boot maps a JSON body's fields to
	 * these parameters by name, as text, and hands over no nested objects or arrays: so an override is one
	 * limit, with the fields of a route's single limit. A mistake is a 400 naming the field.
	 * @param plan a declared plan
	 * @param limit an override's requests per window, with {@code window} (and optionally {@code algorithm},
	 * {@code burst}, {@code logStorage}, {@code name}, {@code scope}, and for a calendar quota {@code calendar},
	 * {@code timeZone}, {@code weekStart}; a penalty {@code blockFor}; {@code unit: tokens} for a token limit on an
	 * LLM route), checked as a route's limit is
	 * @param expires how long the plan or override holds, e.g. {@code 1h}; absent for good
	 * @param clear {@code true} alone: takes the client's plan or override, block or exemption on the target away
	 * @param block a duration (or {@code true} with {@code expires} or {@code until}): 403 until it ends
	 * @param exempt {@code true}: never limited, until cleared or until {@code expires} or {@code until}
	 * @param until when a block or exemption ends, an ISO-8601 instant
	 */
	@WriteOperation
	public Mono<WebEndpointResponse<Object>> assign(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments, @Nullable String plan, @Nullable String limit,
			@Nullable String window, @Nullable String algorithm, @Nullable String burst, @Nullable String logStorage,
			@Nullable String name, @Nullable String scope, @Nullable String calendar, @Nullable String timeZone,
			@Nullable String weekStart, @Nullable String blockFor, @Nullable String unit, @Nullable String model, @Nullable String expires,
			@Nullable String clear, @Nullable String block, @Nullable String exempt, @Nullable String until,
			SecurityContext security) {
		String client = client(segments);
		if (client == null) {
			return ReadyAnswer.of(noClient());
		}
		Principal principal = security.getPrincipal();
		String who = (principal != null) ? principal.getName() : null;
		Map<String, @Nullable String> limitFields = new HashMap<>();
		limitFields.put("limit", limit);
		limitFields.put("window", window);
		limitFields.put("algorithm", algorithm);
		limitFields.put("burst", burst);
		limitFields.put("logStorage", logStorage);
		limitFields.put("name", name);
		limitFields.put("scope", scope);
		limitFields.put("calendar", calendar);
		limitFields.put("timeZone", timeZone);
		limitFields.put("weekStart", weekStart);
		limitFields.put("blockFor", blockFor);
		limitFields.put("unit", unit);
		limitFields.put("model", model);
		boolean others = plan != null || clear != null || limitFields.values().stream().anyMatch(Objects::nonNull);
		return Mono
			.defer(() -> AccessRequest.isAsked(block, exempt, until)
					? this.operations.access(target, client,
							AccessRequest.of(target, block, exempt, expires, until, others, System::currentTimeMillis), who)
					: this.operations.change(target, client,
							AssignmentRequest.of(target, plan, limitFields, expires, clear), who))
			.map(change -> new WebEndpointResponse<Object>(change))
			.defaultIfEmpty(unknown(target))
			.onErrorResume(AssignmentRequest.InvalidAssignmentException.class,
					ex -> Mono.just(new WebEndpointResponse<>(Map.of("error", ex.getMessage(), "field", ex.getField()),
							WebEndpointResponse.STATUS_BAD_REQUEST)))
			.onErrorResume(IllegalStateException.class,
					ex -> Mono.just(new WebEndpointResponse<>(Map.of("error", String.valueOf(ex.getMessage())), 409)))
			.onErrorResume(RateLimitsEndpoint::isRedisUnavailable, ex -> Mono.just(redisUnavailable(ex)))
			.flatMap(ReadyAnswer::of);
	}

	/**
	 * The client key from the path's remaining segments, each already URL-decoded, or null when there is
	 * none. Boot 4.0's WebFlux adapter hands an {@code ALL_REMAINING} selector every segment from the first
	 * selector on, so the first is the target (the tests pin this); its servlet adapter hands only the rest,
	 * and the Server MVC adapter's web extension puts the target first before calling here.
	 */
	private static @Nullable String client(String[] segments) {
		return (segments.length > 1) ? String.join("/", Arrays.asList(segments).subList(1, segments.length)) : null;
	}

	/**
	 * Whether the error says Redis did not answer: it hangs or is gone (a call's bound passed, the guard
	 * failing calls at once while Redis stalls or sheds them), or its connection failed or was refused.
	 */
	static boolean isRedisUnavailable(Throwable error) {
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof TimeoutException || cause instanceof RedisConnectionException
					|| cause instanceof RedisCommandTimeoutException || cause instanceof DataAccessResourceFailureException
					|| cause instanceof QueryTimeoutException || cause instanceof ConnectException) {
				return true;
			}
		}
		return false;
	}

	/**
	 * 503 with a problem-details body saying Redis is unavailable: a state of the service, not a bug of the
	 * gateway (500) nor a mistake of the operator (4xx). A reset or change sent before Redis stopped answering
	 * may still be applied when it answers again, so the body says to read the client then.
	 * @param error what Redis did, named in the detail
	 */
	public static WebEndpointResponse<Object> redisUnavailable(Throwable error) {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", "about:blank");
		problem.put("title", "Service Unavailable");
		problem.put("status", WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		problem.put("detail", "Redis is unavailable (" + error.getMessage() + "); a reset or change asked now may "
				+ "still be applied once it answers: read the client then, and try again if need be");
		return new WebEndpointResponse<>(problem, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE,
				PROBLEM_JSON);
	}

	private WebEndpointResponse<Object> unknown(String target) {
		return new WebEndpointResponse<>(Map.of("error", "No route or scope '" + target + "' is limited by this "
				+ "gateway's window rate limiter; GET /actuator/" + ID + " lists those that are", "routes",
				this.operations.routes().keySet(), "scopes", this.operations.scopes().keySet()),
				WebEndpointResponse.STATUS_NOT_FOUND);
	}

	private static WebEndpointResponse<Object> noClient() {
		return new WebEndpointResponse<>(Map.of("error", "No client key: /actuator/" + ID + "/{target}/{client}"),
				WebEndpointResponse.STATUS_BAD_REQUEST);
	}

}

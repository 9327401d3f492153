package io.windowlimiter.mvc;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.CostAboveLimitException;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.OccasionalLog;
import io.windowlimiter.core.QuotaProblem;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.Reservation;
import io.windowlimiter.core.failure.FailMode;
import io.windowlimiter.core.failure.RedisBudget;
import io.windowlimiter.core.key.ConflictingCredentialsException;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.MissingKey;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.mvc.key.MvcKeyResolver;
import io.windowlimiter.mvc.plan.MvcPlanResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.util.StringUtils;
import org.springframework.web.ErrorResponse;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Decides a Server MVC request with the core, on the request's own thread: resolves the client's key
 * (and its plan, and a cost from a header), waits for the core's decision at most a hard bound, and
 * answers a refusal with the route's {@code status-code}, 429 by default (or the core's status: 403 for a listed or blocked client, a calendar quota's
 * {@code quota-status}), {@code Retry-After}, the rate-limit headers and (when on) a problem-details body,
 * or passes the request on and adds the headers to its response.
 *
 * <p>Blocking: the core's decision is a Mono the Redis guard ends within {@code redis-timeout}, and at
 * once while Redis is stalled, so a dead Redis holds no servlet thread longer than that. This thread
 * waits for it at most {@code redis-timeout} plus {@link #WAIT_MARGIN} (for a CPU too busy to run the
 * guard's timer on time); past that it gives up the decision and answers by the route's fail-mode. On a
 * virtual thread the wait parks the virtual thread, not its carrier.
 *
 * <p>With {@code count-statuses} or {@code cost-from-response-header} the request's reservation is settled
 * as the downstream's response starts to be written (its status and headers known, nothing of its body written),
 * as the WebFlux filter settles when its response starts: the client's next request finds the refund made. A
 * {@code Retry} filter listed before this one makes its attempts the same client request, decided and settled
 * once ({@link MvcAttempts}). The
 * decisions of every WindowRateLimit filter of a request and that settle share one budget, {@code redis-timeout}
 * in all ({@link RedisBudget}): a settle that cannot finish in what is left goes on after the response; one Redis
 * cannot take in time is dropped (the request stays charged what was reserved), counted, never retried.
 *
 * <p>With {@code llm} the filter limits tokens too ({@link MvcLlmCalls}): the call's estimate is reserved at
 * admission, and settled to the usage the upstream reports once its response has been written.
 */
public final class MvcRateLimiter {

	private static final Log logger = LogFactory.getLog(MvcRateLimiter.class);

	/** How much longer than the guard's own bound a request thread waits for a decision. */
	public static final Duration WAIT_MARGIN = Duration.ofMillis(250);

	private static final Duration GIVEN_UP_LOG_INTERVAL = Duration.ofSeconds(10);

	/** The request attribute holding its {@link RedisBudget}. */
	private static final String BUDGET = MvcRateLimiter.class.getName() + ".budget";

	private final RateLimiterCore core;

	private final @Nullable MvcPlanResolver planResolver;

	private final BeanFactory beans;

	private final long waitNanos;

	private final BoundedWait wait;

	private final boolean problemDetails;

	private final Map<String, MvcKeyResolver> keyResolvers = new ConcurrentHashMap<>();

	/** Routes this filter gave the core (the Java DSL's): a refresh of the routes in properties keeps them. */
	private final Set<String> javaDslRoutes = ConcurrentHashMap.newKeySet();

	private final AtomicLong waitsGivenUp = new AtomicLong();

	private final AtomicLong settlesGivenUp = new AtomicLong();

	/** Waits given up happen when the CPU is too busy to run the guard's timers: no line per request then. */
	private final OccasionalLog givenUpLog = new OccasionalLog(MvcRateLimiter.class, GIVEN_UP_LOG_INTERVAL);

	private final MvcLlmCalls llmCalls;

	/**
	 * @param redisTimeout the guard's hard bound on a decision ({@code window-rate-limiter.redis-timeout})
	 * @param beans where key resolvers are found by name
	 */
	public MvcRateLimiter(RateLimiterCore core, @Nullable MvcPlanResolver planResolver, BeanFactory beans,
			Duration redisTimeout, boolean problemDetails) {
		this.core = core;
		this.planResolver = planResolver;
		this.beans = beans;
		this.waitNanos = redisTimeout.plus(WAIT_MARGIN).toNanos();
		this.wait = new BoundedWait(waitBound());
		this.problemDetails = problemDetails;
		this.llmCalls = new MvcLlmCalls(core, this);
	}

	/** The longest a request thread waits for a decision. */
	public Duration waitBound() {
		return Duration.ofNanos(this.waitNanos);
	}

	/** How many decisions took longer than {@link #waitBound()} and were answered by the fail-mode. */
	public long waitsGivenUp() {
		return this.waitsGivenUp.get();
	}

	/**
	 * How many settles took longer than {@link #waitBound()} and were given up; those Redis refused at once
	 * the core counts as dropped ({@code gateway.ratelimit.settles{result=dropped}}).
	 */
	public long settlesGivenUp() {
		return this.settlesGivenUp.get();
	}

	/**
	 * Limits the request by the filter's arguments, on its route. Another attempt of a {@code Retry} filter listed
	 * before this one is the same client request: it goes as its first attempt decided ({@link MvcAttempts}).
	 */
	public ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next,
			WindowRateLimitConfig config) throws Exception {
		MvcAttempts attempts = MvcAttempts.of(request);
		MvcAttempts.Attempt earlier = attempts.earlier(config);
		if (earlier != null) {
			return earlier.again(request, next);
		}
		ServerResponse response = firstAttempt(request, next, config, attempts);
		if (attempts.earlier(config) == null) {
			// answered here (refused, a bad cost or key): a retry of it is answered the same, never sent on, nothing asked
			attempts.first(config, (again, nextAgain) -> response);
		}
		return response;
	}

	/** The request's first pass through this filter: decided, and when admitted, sent on. */
	private ServerResponse firstAttempt(ServerRequest request, HandlerFunction<ServerResponse> next,
			WindowRateLimitConfig config, MvcAttempts attempts) throws Exception {
		String routeId = routeId(request);
		configured(routeId, config);
		LlmSettings llm = config.llmSettings();
		String key;
		MvcKeyResolver keyResolver = keyResolver(config);
		try {
			key = keyResolver.resolve(request);
		}
		catch (ConflictingCredentialsException conflict) {
			// before any limit is asked: the upstream could authenticate it by another key than it is counted under
			return problem(llm, 400, conflict.problem());
		}
		if (!StringUtils.hasText(key)) {
			if (config.isDenyEmptyKey()) {
				int status = config.emptyKeyRefusalStatus();
				MissingKey.log(routeId, status, keyResolver);
				HttpStatus known = HttpStatus.resolve(status);
				return problem(llm, status,
						MissingKey.problem(status, (known != null) ? known.getReasonPhrase() : "Error", keyResolver));
			}
			// as on WebFlux: all keyless requests of the route share one key, so both servers count them together
			key = RedisKeys.EMPTY_KEY;
		}
		if (llm != null) {
			return this.llmCalls.filter(request, next, routeId, key, llm, requestedPlan(request),
					config.refusalStatus(), attempts, config);
		}
		long cost = -1;
		String costHeader = config.getCostFromHeader();
		if (costHeader != null) {
			List<String> values = request.headers().header(costHeader);
			if (values.size() > 1) {
				// which one would the upstream read? Refused as on WebFlux, rather than charged the first
				return badRequest(costHeader, costHeader + " is sent " + values.size() + " times; allowed: one "
						+ costHeader + " header, a whole number from 1, at most what the route's smallest limit allows at once");
			}
			String value = values.isEmpty() ? null : values.get(0);
			if (value != null) {
				cost = cost(value);
				if (cost < 0) {
					return badCost(costHeader, value, -1);
				}
			}
		}
		RedisBudget budget = budget(request);
		Admission admission;
		try {
			admission = await(routeId, budget.bound(this.core.admit(routeId, key, cost, requestedPlan(request))));
		}
		catch (CostAboveLimitException tooHigh) {
			// more than the client's own policy (its plan, its override) takes at once: the client's mistake
			return badCost(costHeader, Long.toString(tooHigh.cost()), tooHigh.maxCost());
		}
		if (!admission.passes()) {
			return refusal(admission, config.refusalStatus());
		}
		Reservation reservation = admission.reservation();
		MvcAttempts.Attempt admitted;
		if (reservation == null || !config.settlesOnResponse()) {
			admitted = (attempt, nextAttempt) -> {
				ServerResponse response = nextAttempt.handle(attempt);
				addHeaders(response, admission.headers());
				return response;
			};
		}
		else {
			// settled once, by the response the client gets (a Retry before this filter may make several attempts)
			MvcResponseSettle settle = new MvcResponseSettle(this, config, reservation, budget, admission.headers());
			attempts.unsettled(settle);
			admitted = settle;
		}
		attempts.first(config, admitted);
		return admitted.again(request, next);
	}

	/**
	 * What is left of this request's time for Redis: one budget, {@code redis-timeout} in all, for the decisions
	 * of every WindowRateLimit filter of the request and the settles its response waits for.
	 */
	RedisBudget budget(ServerRequest request) {
		Object budget = request.attributes().computeIfAbsent(BUDGET, name -> this.core.newBudget());
		return (budget instanceof RedisBudget known) ? known : this.core.newBudget();
	}

	/** The status an exception is answered with: its own (a {@link ErrorResponse}), else a 500. */
	static int failedStatus(Exception ex) {
		return (ex instanceof ErrorResponse error) ? error.getStatusCode().value()
				: HttpStatus.INTERNAL_SERVER_ERROR.value();
	}

	/**
	 * Settles, the response waiting for it at most what is left of the request's Redis budget: a settle that
	 * cannot finish by then goes on after the response (bounded by the guard; one Redis cannot take is dropped,
	 * and the request stays charged what was reserved). Nothing is sent when the cost is as reserved.
	 */
	void settle(Reservation reservation, long actual, RedisBudget budget) {
		if (actual != reservation.cost()) {
			awaitSettle(reservation.routeId(), budget.waitAtMost(this.core.settle(reservation, actual)));
		}
	}

	/** A settle, waited for at most {@link #waitBound()}; past it cancelled and counted as given up. */
	void awaitSettle(String routeId, Mono<?> settle) {
		try {
			this.wait.await(settle);
		}
		catch (InterruptedException ex) {
			// the response is known: it goes out, and whoever interrupted still finds the flag set
			Thread.currentThread().interrupt();
		}
		catch (TimeoutException ex) {
			long givenUp = this.settlesGivenUp.incrementAndGet();
			this.givenUpLog.warn(() -> "No settle for route '" + routeId + "' within " + waitBound().toMillis()
					+ " ms; the request stays charged what was reserved (" + givenUp + " settle(s) given up so far; at "
					+ "most one such line per " + GIVEN_UP_LOG_INTERVAL + ")");
		}
		catch (ExecutionException ex) {
			// the core answers a settle Redis cannot take as dropped; anything else is a bug, not the client's
			logger.warn("Settle for route '" + routeId + "' failed", ex.getCause());
		}
	}

	/**
	 * A route built in the Java DSL reaches the core first here; one from properties was configured at
	 * start-up by {@link MvcRouteCheck}, and this finds it.
	 */
	private void configured(String routeId, WindowRateLimitConfig config) {
		if (this.core.route(routeId) == null) {
			synchronized (this) {
				if (this.core.route(routeId) == null) {
					this.core.configure(routeId, CredentialKeys.marked(config.limiterArguments(), keyResolver(config)),
							SlotRelease.NEVER, config.llmSettings() != null);
					this.javaDslRoutes.add(routeId);
				}
			}
		}
	}

	/** The routes that reached the core through a request (built in the Java DSL), not from properties. */
	public Set<String> javaDslRoutes() {
		return Set.copyOf(this.javaDslRoutes);
	}

	private static String routeId(ServerRequest request) {
		Object routeId = request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).orElse(null);
		if (routeId == null) {
			throw new IllegalStateException("WindowRateLimit needs the route's id: build Java DSL routes with "
					+ "GatewayRouterFunctions.route(\"id\"), not RouterFunctions.route()");
		}
		return routeId.toString();
	}

	private MvcKeyResolver keyResolver(WindowRateLimitConfig config) {
		String name = config.getKeyResolver();
		if (name == null) {
			throw new IllegalStateException("WindowRateLimit has no key-resolver: name a MvcKeyResolver bean");
		}
		return this.keyResolvers.computeIfAbsent(name, this::keyResolverBean);
	}

	MvcKeyResolver keyResolverBean(String name) {
		try {
			return this.beans.getBean(name, MvcKeyResolver.class);
		}
		catch (NoSuchBeanDefinitionException ex) {
			throw new IllegalStateException("WindowRateLimit key-resolver '" + name + "' is no MvcKeyResolver bean; "
					+ "built in: headerKeyResolver, apiKeyResolver, clientIpKeyResolver, principalKeyResolver", ex);
		}
	}

	private Mono<String> requestedPlan(ServerRequest request) {
		MvcPlanResolver resolver = this.planResolver;
		return (resolver != null) ? Mono.fromSupplier(() -> resolver.resolve(request)) : Mono.empty();
	}

	/**
	 * A whole number from 1, or -1. Whether every limit can take it at once is the core's to say, by the limits of
	 * the client's own policy (a plan's, an override's), which only it knows.
	 */
	private static long cost(String value) {
		String digits = value.strip();
		// digits only: no sign, no exponent; 18 digits always fit a long
		if (digits.isEmpty() || digits.length() > 18 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
			return -1;
		}
		long cost = Long.parseLong(digits);
		return (cost < 1) ? -1 : cost;
	}

	/**
	 * A 400 problem-details answer naming the cost header, its value and what is allowed, as the WebFlux filter
	 * answers it.
	 * @param maxCost the most the client's policy takes at once; -1 when the value is no whole number from 1
	 */
	private static ServerResponse badCost(String header, String value, long maxCost) {
		String printable = printable(value);
		String detail = header + " is '" + printable + "'" + ((maxCost > 0) ? ", more than this route allows at once" : "")
				+ "; allowed: a whole number from 1" + ((maxCost > 0) ? " to " + maxCost
						: ", at most what the route's smallest limit allows at once");
		return badRequest(header, detail);
	}

	/** A 400 problem-details answer about the cost header, with its detail. */
	private static ServerResponse badRequest(String header, String detail) {
		String body = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
				+ QuotaProblem.jsonString(detail) + ",\"header\":" + QuotaProblem.jsonString(header) + "}";
		return ServerResponse.badRequest().contentType(MediaType.APPLICATION_PROBLEM_JSON).body(body);
	}

	/** A problem-details answer; on an LLM route the provider's error object of the same message instead. */
	private static ServerResponse problem(@Nullable LlmSettings llm, int status, String problem) {
		if (llm != null) {
			return MvcLlmCalls.error(llm, ServerResponse.status(status), status, problem);
		}
		return ServerResponse.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(problem);
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

	/**
	 * The core's decision, waited for at most the bound. Past it (the guard's timer did not run in time)
	 * the decision is cancelled and the route's fail-mode answers: open passes, closed and local refuse.
	 */
	Admission await(String routeId, Mono<Admission> decision) throws InterruptedException {
		try {
			return this.wait.await(decision);
		}
		catch (TimeoutException ex) {
			long givenUp = this.waitsGivenUp.incrementAndGet();
			this.givenUpLog.warn(() -> "No rate-limit decision for route '" + routeId + "' within "
					+ waitBound().toMillis() + " ms; answered by its fail-mode (" + givenUp + " decision(s) given up so "
					+ "far; at most one such line per " + GIVEN_UP_LOG_INTERVAL + ")");
			return failMode(routeId);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			throw (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause);
		}
	}

	private Admission failMode(String routeId) {
		CompiledRoute route = this.core.route(routeId);
		if (route == null || route.policy.failMode() == FailMode.OPEN) {
			return new Admission(true, Map.of(), List.of());
		}
		return new Admission(false, Map.of(RateLimitHeaders.RETRY_AFTER, "1"), List.of());
	}

	/**
	 * The route's {@code status-code} (429 by default), or the core's own status when it has one (as the
	 * WebFlux filter answers): 403 for a client on a deny list or blocked by an operator, a calendar quota's
	 * {@code quota-status}. The core's headers go as they are: a deny list's refusal has no Retry-After,
	 * since no wait ends it.
	 */
	ServerResponse refusal(Admission admission, int statusCode) {
		int status = (admission.status() != 0) ? admission.status() : statusCode;
		ServerResponse.BodyBuilder refusal = ServerResponse.status(status)
			.headers(headers -> admission.headers().forEach(headers::set));
		if (this.problemDetails && admission.forbidden()) {
			return refusal.contentType(MediaType.APPLICATION_PROBLEM_JSON).body(QuotaProblem.FORBIDDEN);
		}
		if (this.problemDetails && !admission.violated().isEmpty()) {
			return refusal.contentType(MediaType.APPLICATION_PROBLEM_JSON)
				.body(QuotaProblem.json(status, admission.violated()));
		}
		return refusal.build();
	}

	static void addHeaders(ServerResponse response, Map<String, String> headers) {
		if (headers.isEmpty()) {
			return;
		}
		try {
			headers.forEach(response.headers()::set);
		}
		catch (UnsupportedOperationException ex) {
			// a handler that built its response read-only: it goes out without the headers, never fails
			logger.debug("Rate-limit headers not added to a read-only response", ex);
		}
	}

}

package io.windowlimiter.mvc.operations;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.windowlimiter.core.operations.RateLimitsEndpoint;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint's per-client operations on a servlet server (Server MVC): the same
 * operations of {@link RateLimitsEndpoint}, whose answers are Monos, answered with their value. Boot's servlet
 * endpoint adapter unwraps a {@link WebEndpointResponse} only when the operation returns one: a
 * {@code Mono<WebEndpointResponse>} went out as a 200 with the wrapper serialised ({@code "body"},
 * {@code "status"}), so every 404 and 400 was a 200. The endpoint's other operations need nothing of this.
 *
 * <p>The request's servlet thread waits for the answer: every Redis call of the operations has its own bound
 * ({@code redis-timeout}), past which the endpoint answers 503 itself, so {@link #WAIT} is only the last guard,
 * answered the same.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsServletEndpointExtension {

	/** The longest a servlet thread waits for an operation: past the sum of its Redis calls' own bounds. */
	public static final Duration WAIT = Duration.ofSeconds(30);

	private final RateLimitsEndpoint endpoint;

	public RateLimitsServletEndpointExtension(RateLimitsEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/** As {@link RateLimitsEndpoint#client}. */
	@ReadOperation
	public WebEndpointResponse<Object> client(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments) throws InterruptedException {
		return await(this.endpoint.client(target, fromTarget(target, segments)));
	}

	/** As {@link RateLimitsEndpoint#reset}. */
	@DeleteOperation
	public WebEndpointResponse<Object> reset(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments, SecurityContext security)
			throws InterruptedException {
		return await(this.endpoint.reset(target, fromTarget(target, segments), security));
	}

	/** As {@link RateLimitsEndpoint#assign}, with the same fields. */
	@WriteOperation
	public WebEndpointResponse<Object> assign(@Selector String target,
			@Selector(match = Match.ALL_REMAINING) String[] segments, @Nullable String plan, @Nullable String limit,
			@Nullable String window, @Nullable String algorithm, @Nullable String burst, @Nullable String logStorage,
			@Nullable String name, @Nullable String scope, @Nullable String calendar, @Nullable String timeZone,
			@Nullable String weekStart, @Nullable String blockFor, @Nullable String unit, @Nullable String model, @Nullable String expires,
			@Nullable String clear, @Nullable String block, @Nullable String exempt, @Nullable String until,
			SecurityContext security) throws InterruptedException {
		return await(this.endpoint.assign(target, fromTarget(target, segments), plan, limit, window, algorithm, burst,
				logStorage, name, scope, calendar, timeZone, weekStart, blockFor, unit, model, expires, clear, block, exempt,
				until, security));
	}

	/**
	 * The segments as the endpoint reads them. WebFlux's adapter hands an {@code ALL_REMAINING} selector every
	 * segment from the first selector on (the target first); the servlet adapter only those after the target.
	 */
	static String[] fromTarget(String target, String[] segments) {
		String[] all = new String[segments.length + 1];
		all[0] = target;
		System.arraycopy(segments, 0, all, 1, segments.length);
		return all;
	}

	private static WebEndpointResponse<Object> await(Mono<WebEndpointResponse<Object>> answer)
			throws InterruptedException {
		try {
			return answer.toFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			return RateLimitsEndpoint.redisUnavailable(new TimeoutException("no answer within " + WAIT.toSeconds() + " s"));
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			throw (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause);
		}
	}

}

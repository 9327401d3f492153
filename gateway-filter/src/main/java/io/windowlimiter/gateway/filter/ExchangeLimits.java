package io.windowlimiter.gateway.filter;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.failure.RedisBudget;
import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * What the {@code WindowRateLimit} filters of one request share: the filter that decided each policy (a policy
 * deciding twice would count the request twice), how close the closest limit so far is to refusing (its
 * headers are the ones sent), whether a filter refused the request (then the earlier ones give back what
 * they reserved), and what is left of the answer's time for Redis (one {@link RedisBudget} for every
 * filter's decision and a settle before the response). The filters of one request run one after the other,
 * never at once.
 *
 * <p>It lives in the exchange's attributes, which the gateway's {@code Retry} filter keeps when it runs the rest
 * of the chain again for another attempt: a filter listed after {@code Retry} then sees the request a second
 * time ({@link Pass#AGAIN}), and the attempts share one budget.
 */
final class ExchangeLimits {

	private static final String ATTRIBUTE = ExchangeLimits.class.getName();

	/** The policies that decided this request, and beside each (same index) the filter that decided it. */
	private final List<String> policies = new ArrayList<>(2);

	private final List<Object> filters = new ArrayList<>(2);

	private long closest = Long.MAX_VALUE;

	private boolean refused;

	private @Nullable RedisBudget budget;

	static ExchangeLimits of(ServerWebExchange exchange) {
		return exchange.getAttributes().computeIfAbsent(ATTRIBUTE, name -> new ExchangeLimits()) instanceof ExchangeLimits limits
				? limits : new ExchangeLimits();
	}

	/** How a filter meets this request. */
	enum Pass {

		/** The first time: the filter decides it. */
		FIRST,

		/** Again: a filter before it (the gateway's {@code Retry}) runs it once more for another attempt. */
		AGAIN,

		/** Another filter known by the same policy decided it: the request would be counted twice. */
		TAKEN

	}

	/** Records that {@code filter} decides this request for its policy, unless it or another filter did. */
	Pass pass(String policyId, Object filter) {
		int at = this.policies.indexOf(policyId);
		if (at >= 0) {
			return (this.filters.get(at) == filter) ? Pass.AGAIN : Pass.TAKEN;
		}
		this.policies.add(policyId);
		this.filters.add(filter);
		return Pass.FIRST;
	}

	/** Whether a limit with {@code remaining} left is the closest to refusing so far; it then becomes it. */
	boolean closest(long remaining) {
		if (remaining >= this.closest) {
			return false;
		}
		this.closest = remaining;
		return true;
	}

	/** A filter refused the request (by a limit, an empty key or a bad cost). */
	void refuse() {
		this.refused = true;
	}

	boolean refused() {
		return this.refused;
	}

	/** The answer's Redis budget, made by the first filter that asks: {@code redis-timeout} for all of them. */
	RedisBudget budget(RateLimiterCore core) {
		RedisBudget budget = this.budget;
		if (budget == null) {
			budget = core.newBudget();
			this.budget = budget;
		}
		return budget;
	}

}

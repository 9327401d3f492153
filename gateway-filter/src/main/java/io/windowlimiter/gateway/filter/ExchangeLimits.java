package io.windowlimiter.gateway.filter;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.failure.RedisBudget;
import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * What the {@code WindowRateLimit} filters of one request share: the policies that decided it (a policy
 * deciding twice would count the request twice), how close the closest limit so far is to refusing (its
 * headers are the ones sent), and whether a later filter refused the request (then the earlier ones give
 * back what they reserved), and what is left of the answer's time for Redis (one {@link RedisBudget} for every
 * filter's decision and a settle before the response). The filters of one request run one after the other,
 * never at once.
 */
final class ExchangeLimits {

	private static final String ATTRIBUTE = ExchangeLimits.class.getName();

	private final List<String> policies = new ArrayList<>(2);

	private long closest = Long.MAX_VALUE;

	private boolean refused;

	private @Nullable RedisBudget budget;

	static ExchangeLimits of(ServerWebExchange exchange) {
		return exchange.getAttributes().computeIfAbsent(ATTRIBUTE, name -> new ExchangeLimits()) instanceof ExchangeLimits limits
				? limits : new ExchangeLimits();
	}

	/** Records that the policy decides this request; false when it already did. */
	boolean decides(String policyId) {
		if (this.policies.contains(policyId)) {
			return false;
		}
		this.policies.add(policyId);
		return true;
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

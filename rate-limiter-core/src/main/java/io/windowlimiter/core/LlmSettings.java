package io.windowlimiter.core;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.metering.LlmApi;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.Usage;
import io.windowlimiter.metering.UsageMeter;
import org.jspecify.annotations.Nullable;

/**
 * The LLM arguments of one {@code WindowRateLimit} filter, checked: {@code llm} (the API its requests speak),
 * {@code max-body-bytes} (the largest request body read to estimate), and which limits count tokens
 * ({@code unit: tokens} on a limit; the others count requests). The {@code unit} arguments are the
 * filter's, not the core's: {@link #withoutUnits} takes them out of the limits' arguments. Shared by the
 * filters of both gateways (WebFlux and Server MVC), with the rules that cost and settle a call, so both
 * refuse the same arguments with the same messages and charge a call alike.
 *
 * @param api the API the route's requests speak
 * @param tokenLimits for each limit, in the limits' order, whether it counts tokens
 * @param maxBodyBytes the largest request body read; larger ones are answered 413
 */
public record LlmSettings(LlmApi api, boolean[] tokenLimits, int maxBodyBytes) {

	/** A chat request with a long context is a few hundred KB; 4 MB leaves room for images in base64. */
	public static final int DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

	public static final int MOST_MAX_BODY_BYTES = 64 * 1024 * 1024;

	/** A limit's unit, as the limits' arguments carry it (prefixed), single or indexed. */
	private static final Pattern UNIT = Pattern
		.compile(Pattern.quote(RouteArgs.PREFIX) + "(?:limits(?:\\[(\\d+)\\]|\\.(\\d+))\\.)?unit");

	/** The filter's own arguments that settle by other means than the response's usage. */
	private static final String[] OTHER_COSTS = { "cost-from-header", "cost-resolver", "cost-from-response-header",
			"count-statuses" };

	/**
	 * @param own the filter's own arguments (with {@code llm}, {@code max-body-bytes})
	 * @param limitArgs the limits' arguments, prefixed as {@code RouteArgs} reads them, units included
	 * @return the settings; null when the filter has no {@code llm}
	 * @throws InvalidRouteConfigurationException naming the filter, the argument and what is allowed
	 */
	public static @Nullable LlmSettings of(String policyId, Map<String, ?> own, Map<String, ?> limitArgs) {
		Map<Integer, String> units = new TreeMap<>();
		int indexed = -1;
		for (Map.Entry<String, ?> entry : limitArgs.entrySet()) {
			Matcher matcher = UNIT.matcher(entry.getKey());
			String index = indexOf(entry.getKey());
			if (index != null) {
				indexed = Math.max(indexed, Integer.parseInt(index));
			}
			if (matcher.matches()) {
				String at = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
				int position = (at != null) ? Integer.parseInt(at) : 0;
				String property = (at != null) ? "limits[" + at + "].unit" : "unit";
				String unit = String.valueOf(entry.getValue()).trim();
				if (!unit.equals("tokens") && !unit.equals("requests")) {
					throw new InvalidRouteConfigurationException(policyId, property, "is '" + unit + "'",
							"tokens (the limit counts the tokens of LLM calls; needs llm) or requests (the default)");
				}
				units.put(position, unit);
			}
		}
		boolean several = indexed >= 0;
		Object llm = own.get("llm");
		if (llm == null) {
			units.forEach((position, unit) -> {
				if (unit.equals("tokens")) {
					throw new InvalidRouteConfigurationException(policyId, several ? "limits[" + position + "].unit"
							: "unit", "is 'tokens' on a filter without llm",
							"llm: openai or llm: anthropic on the filter, which reads the tokens of each call; or unit: requests");
				}
			});
			if (own.get("max-body-bytes") != null) {
				throw new InvalidRouteConfigurationException(policyId, "max-body-bytes", "is set without llm",
						"llm: openai or anthropic beside it (only LLM routes read request bodies)");
			}
			return null;
		}
		LlmApi api;
		try {
			api = LlmApi.of(llm.toString());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRouteConfigurationException(policyId, "llm", "is '" + llm + "'",
					"openai (chat completions and responses) or anthropic (messages)");
		}
		for (String other : OTHER_COSTS) {
			if (own.get(other) != null) {
				throw new InvalidRouteConfigurationException(policyId, other, "is set beside llm",
						"one way to cost a request: llm settles token limits to the usage the upstream reports; give "
								+ other + " a WindowRateLimit filter of its own (with an id)");
			}
		}
		Object maxDelay = limitArgs.get(RouteArgs.PREFIX + "max-delay");
		if (maxDelay != null && !maxDelay.toString().trim().equals("0")) {
			// the core decides an LLM call's limits at a cost per limit and does not hold it: a slot reserved
			// ahead would be spent by a call forwarded at once
			throw new InvalidRouteConfigurationException(policyId, "max-delay", "is '" + maxDelay + "' beside llm",
					"no max-delay on an LLM filter (its calls are refused at once, with Retry-After); hold requests "
							+ "on a WindowRateLimit filter without llm");
		}
		if (limitArgs.containsKey(RouteArgs.PREFIX + "plan")) {
			throw new InvalidRouteConfigurationException(policyId, "plan", "is set beside llm",
					"limits of the filter's own (limits[i].*, with unit: tokens on the token limits): plans on LLM "
							+ "routes are not supported yet");
		}
		int count = (indexed >= 0) ? indexed + 1 : 1;
		boolean[] tokens = new boolean[count];
		units.forEach((position, unit) -> {
			if (position < count) {
				tokens[position] = unit.equals("tokens");
			}
		});
		boolean any = false;
		for (int i = 0; i < count; i++) {
			any |= tokens[i];
			Object algorithm = limitArg(limitArgs, i, "algorithm");
			if (tokens[i] && algorithm != null && "concurrency".equals(algorithm.toString().trim())) {
				throw new InvalidRouteConfigurationException(policyId, several ? "limits[" + i + "].unit" : "unit",
						"is 'tokens' on a limit of algorithm concurrency",
						"unit: requests (the default) there: a concurrency limit counts requests in flight, one slot each");
			}
			Object ownStorage = ownLimitArg(limitArgs, i, "log-storage");
			Object storage = (ownStorage != null) ? ownStorage : limitArgs.get(RouteArgs.PREFIX + "log-storage");
			if (tokens[i] && storage != null && "sorted-set".equals(storage.toString().trim())) {
				throw new InvalidRouteConfigurationException(policyId,
						(ownStorage != null) ? "limits[" + i + "].log-storage" : "log-storage",
						"is 'sorted-set' on a limit counting tokens",
						"the ring (the default log-storage: leave it out), which keeps one entry per call whatever its "
								+ "tokens; the sorted set keeps one per token, and a call of thousands of them takes "
								+ "Redis hundreds of ms");
			}
		}
		if (!any) {
			throw new InvalidRouteConfigurationException(policyId, "llm", "is set but no limit counts tokens",
					"unit: tokens on at least one limit (limits[i].unit: tokens), for example "
							+ "limits[1]: { limit: 100000, window: 1m, unit: tokens }");
		}
		return new LlmSettings(api, tokens, maxBodyBytes(policyId, own.get("max-body-bytes")));
	}

	/** Limit i's argument {@code name}: its own ({@code limits[i].name} or {@code limits.i.name}), else the route's. */
	private static @Nullable Object limitArg(Map<String, ?> limitArgs, int i, String name) {
		Object value = ownLimitArg(limitArgs, i, name);
		return (value != null) ? value : limitArgs.get(RouteArgs.PREFIX + name);
	}

	private static @Nullable Object ownLimitArg(Map<String, ?> limitArgs, int i, String name) {
		Object value = limitArgs.get(RouteArgs.PREFIX + "limits[" + i + "]." + name);
		return (value != null) ? value : limitArgs.get(RouteArgs.PREFIX + "limits." + i + "." + name);
	}

	/** The limits' arguments without the units, as {@code RouteArgs} reads them. */
	public static Map<String, Object> withoutUnits(Map<String, Object> limitArgs) {
		Map<String, Object> rest = new LinkedHashMap<>(limitArgs);
		rest.keySet().removeIf(name -> UNIT.matcher(name).matches());
		return rest;
	}

	/** Whether limit i counts tokens. */
	public boolean countsTokens(int limit) {
		return limit < this.tokenLimits.length && this.tokenLimits[limit];
	}

	/** The smallest of the token limits (and their bursts): no estimate exceeds it. */
	public long smallestTokenLimit(List<RouteLimit> limits) {
		long smallest = Long.MAX_VALUE;
		for (int i = 0; i < limits.size(); i++) {
			if (countsTokens(i)) {
				smallest = Math.min(smallest, Math.min(limits.get(i).policy().limit(), limits.get(i).policy().burst()));
			}
		}
		return (smallest == Long.MAX_VALUE) ? 1 : smallest;
	}

	/** What a call costs each of {@code limits} limits at admission: the estimate in token limits, else requestCost. */
	public long[] costs(int limits, long estimatedTokens, long requestCost) {
		long[] costs = new long[limits];
		for (int i = 0; i < limits; i++) {
			costs[i] = countsTokens(i) ? estimatedTokens : requestCost;
		}
		return costs;
	}

	/**
	 * The remaining tokens of the token limit closest to refusing, after the reservation; -1 when the
	 * reservation knows none.
	 */
	public long remainingTokens(Reservation reservation) {
		long remaining = Long.MAX_VALUE;
		for (int i = 0; i < reservation.costs().length; i++) {
			if (countsTokens(i) && reservation.remainingAfter(i) >= 0) {
				remaining = Math.min(remaining, reservation.remainingAfter(i));
			}
		}
		return (remaining == Long.MAX_VALUE) ? -1 : remaining;
	}

	/** The reservation's costs settled: each token limit to {@code actualTokens}; request limits as reserved. */
	public long[] settled(Reservation reservation, long actualTokens) {
		long[] costs = reservation.costs();
		for (int i = 0; i < costs.length; i++) {
			if (countsTokens(i)) {
				costs[i] = actualTokens;
			}
		}
		return costs;
	}

	/**
	 * The tokens to charge a call whose response ended with {@code status}: {@link UsageMeter#charge(int)};
	 * when the client went away first, at least the reservation and what was observed (hanging up must not
	 * make a call cheap).
	 */
	public static long charge(UsageMeter meter, int status, boolean clientGone) {
		if (!clientGone) {
			return meter.charge(status);
		}
		return Math.max(meter.reservedTokens(), Math.max(meter.usage().observedTokens(), meter.charge(status)));
	}

	/**
	 * Whether a response that completed with {@code status} came without usage the meter could read: it is
	 * charged its reservation, and counted ({@code gateway.ratelimit.llm.usage.missing}).
	 */
	public static boolean usageMissing(UsageMeter meter, int status) {
		Usage.Outcome outcome = meter.usage().outcome();
		return status < 400 && (outcome == Usage.Outcome.NONE || outcome == Usage.Outcome.PARTIAL);
	}

	/**
	 * The 400 problem body (RFC 9457, as the route's 413) for a request body the gateway refuses
	 * ({@link LlmRequest#refusal()}): its detail, and the field it names as {@code field} when there is one.
	 */
	public static String badRequestProblem(LlmRequest.Refusal refusal) {
		String field = refusal.field();
		return "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
				+ QuotaProblem.jsonString(refusal.detail())
				+ ((field != null) ? ",\"field\":" + QuotaProblem.jsonString(field) : "") + "}";
	}

	private static @Nullable String indexOf(String name) {
		Matcher matcher = Pattern.compile(Pattern.quote(RouteArgs.PREFIX) + "limits(?:\\[(\\d+)\\]|\\.(\\d+))\\..*")
			.matcher(name);
		if (!matcher.matches()) {
			return null;
		}
		return (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
	}

	private static int maxBodyBytes(String policyId, @Nullable Object value) {
		if (value == null) {
			return DEFAULT_MAX_BODY_BYTES;
		}
		String text = value.toString().trim();
		if (!text.isEmpty() && text.length() <= 9 && text.chars().allMatch(Character::isDigit)) {
			long bytes = Long.parseLong(text);
			if (bytes >= 1024 && bytes <= MOST_MAX_BODY_BYTES) {
				return (int) bytes;
			}
		}
		throw new InvalidRouteConfigurationException(policyId, "max-body-bytes", "is '" + text + "'",
				"a whole number of bytes from 1024 to " + MOST_MAX_BODY_BYTES + " (default " + DEFAULT_MAX_BODY_BYTES + ")");
	}

}

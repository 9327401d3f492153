package io.windowlimiter.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.metering.LlmApi;
import io.windowlimiter.metering.LlmPrices;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.Usage;
import io.windowlimiter.metering.UsageMeter;
import org.jspecify.annotations.Nullable;

/**
 * The LLM arguments of one {@code WindowRateLimit} filter, checked: {@code llm} (the API its requests speak),
 * {@code max-body-bytes} (the largest request body read to estimate), and whether its limits count tokens
 * where they may ({@code unit: tokens} on a filter with {@code llm}, on at least one of its own limits). What
 * each limit counts is the limit's own ({@link io.windowlimiter.core.policy.RouteLimit#countsTokens}), read by
 * {@code RouteArgs} with the other limit properties, so that plans and overrides may count tokens too; the core
 * costs and settles a call by the limits of the client's own policy. Shared by the filters of both gateways
 * (WebFlux and Server MVC), with the rules that charge a call, so both refuse the same arguments with the same
 * messages and charge a call alike.
 *
 * @param api the API the route's requests speak
 * @param maxBodyBytes the largest request body read; larger ones are answered 413
 */
public record LlmSettings(LlmApi api, int maxBodyBytes) {

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
		boolean several = false;
		for (Map.Entry<String, ?> entry : limitArgs.entrySet()) {
			Matcher matcher = UNIT.matcher(entry.getKey());
			several |= entry.getKey().startsWith(RouteArgs.PREFIX + "limits");
			if (matcher.matches()) {
				String at = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
				String unit = String.valueOf(entry.getValue()).trim();
				if (!unit.equals("tokens") && !unit.equals("usd") && !unit.equals("requests")) {
					// named before what depends on it (no token limit), as RouteArgs names it
					throw new InvalidRouteConfigurationException(policyId, (at != null) ? "limits[" + at + "].unit" : "unit",
							"is '" + unit + "'", RouteArgs.UNITS);
				}
				units.put((at != null) ? Integer.parseInt(at) : 0, unit);
			}
		}
		boolean indexed = several;
		Object llm = own.get("llm");
		if (llm == null) {
			units.forEach((position, unit) -> {
				if (unit.equals("tokens")) {
					throw new InvalidRouteConfigurationException(policyId, indexed ? "limits[" + position + "].unit"
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
		// with a plan, the plans' limits count tokens: the registry checks that each has a token limit
		if (!limitArgs.containsKey(RouteArgs.PREFIX + "plan") && !units.containsValue("tokens")
				&& !units.containsValue("usd")) {
			throw new InvalidRouteConfigurationException(policyId, "llm", "is set but no limit counts tokens",
					"unit: tokens (or usd) on at least one limit (limits[i].unit: tokens), for example "
							+ "limits[1]: { limit: 100000, window: 1m, unit: tokens }");
		}
		return new LlmSettings(api, maxBodyBytes(policyId, own.get("max-body-bytes")));
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
	 * What to charge a call whose response ended with {@code status}: its tokens as {@link #charge(UsageMeter,
	 * int, boolean)}; its price, where it counts money, by the same rules at its model's price
	 * ({@link Usage#chargeMicroDollars}), at least the reservation and what was seen when the client went away.
	 * @param reservation what the call reserved; null when nothing was (then nothing in money)
	 */
	public static LlmCharge charge(UsageMeter meter, int status, boolean clientGone, @Nullable Reservation reservation) {
		long tokens = charge(meter, status, clientGone);
		if (reservation == null || reservation.microDollars() == 0) {
			return new LlmCharge(tokens, 0);
		}
		LlmPrices.Price price = reservation.price();
		if (price == null) {
			// a money limit (an operator's override on a route without one of its own) counted a model the table
			// does not price: it reserved the most it allows, and is charged that, not nothing
			return new LlmCharge(tokens, reservation.microDollars());
		}
		Usage usage = meter.usage();
		long reserved = reservation.microDollars();
		long money = usage.chargeMicroDollars(price, reserved, status);
		if (clientGone) {
			money = Math.max(reserved, Math.max(usage.observedMicroDollars(price), money));
		}
		return new LlmCharge(tokens, money);
	}

	/**
	 * Whether a response that completed with {@code status} came without usage the meter could read: it is
	 * charged its reservation, and counted ({@code gateway.ratelimit.llm.usage.missing}).
	 */
	public static boolean usageMissing(UsageMeter meter, int status) {
		Usage.Outcome outcome = meter.usage().outcome();
		return status < 400 && (outcome == Usage.Outcome.NONE || outcome == Usage.Outcome.PARTIAL);
	}

	/** The status a request body in a content coding is refused with: one the server will not take (RFC 9110). */
	public static final int UNSUPPORTED_ENCODING_STATUS = 415;

	/**
	 * The 415 problem body for a request whose body is in a content coding ({@code Content-Encoding} other than
	 * {@code identity}: gzip, deflate, br ...), or null for a body as it is. The meter reads the body as JSON to
	 * estimate it, find its duplicated fields and ask for a stream's usage; a compressed body it cannot read, while
	 * the upstream may decode it, so it is refused before it is read, nothing charged, nothing sent upstream. The
	 * answer carries {@code Accept-Encoding: identity}, naming the only coding taken (RFC 9110, 15.5.16).
	 * @param contentEncoding the request's {@code Content-Encoding} values, each possibly a comma-separated list
	 */
	public static @Nullable String unsupportedEncodingProblem(@Nullable List<String> contentEncoding) {
		if (contentEncoding == null) {
			return null;
		}
		for (String value : contentEncoding) {
			for (String coding : value.split(",", -1)) {
				String name = coding.strip();
				if (!name.isEmpty() && !name.equalsIgnoreCase("identity")) {
					String detail = "The request body is in a content coding (Content-Encoding: "
							+ printable(String.join(", ", contentEncoding)) + "), which this LLM route does not "
							+ "read: its tokens are estimated and metered from the JSON as sent; send it uncompressed";
					return "{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":"
							+ UNSUPPORTED_ENCODING_STATUS + ",\"detail\":" + QuotaProblem.jsonString(detail)
							+ ",\"header\":\"Content-Encoding\"}";
				}
			}
		}
		return null;
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
	 * The 400 problem body (RFC 9457, as the route's 413) for a request body the gateway refuses
	 * ({@link LlmRequest#refusal()}): its detail, and the field it names as {@code field} when there is one.
	 */
	public static String badRequestProblem(LlmRequest.Refusal refusal) {
		String field = refusal.field();
		return "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
				+ QuotaProblem.jsonString(refusal.detail())
				+ ((field != null) ? ",\"field\":" + QuotaProblem.jsonString(field) : "") + "}";
	}

	/** The 413 problem body (RFC 9457) for a request body above the route's {@code max-body-bytes}, naming it. */
	public static String tooLargeProblem(int maxBodyBytes) {
		String detail = "The request body is larger than this LLM route reads to estimate its tokens: at most "
				+ maxBodyBytes + " bytes (max-body-bytes)";
		return "{\"type\":\"about:blank\",\"title\":\"Content Too Large\",\"status\":413,\"detail\":"
				+ QuotaProblem.jsonString(detail) + ",\"max-body-bytes\":" + maxBodyBytes + "}";
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
